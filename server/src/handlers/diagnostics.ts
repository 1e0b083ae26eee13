/**
 * A document's lint, from its text to what the editor shows: lints a text document (Python or a
 * manifest) or a notebook at its current version, and gives a {@link LintOutcome} that, when
 * committed, publishes the diagnostics (with code, codeDescription and relatedInformation) and
 * stores in the document's OpenDocument (session.ts) what the requests after it read: the fixes,
 * the GPU001 lines, a notebook's per-cell state.
 */
import { pathToFileURL } from "node:url";
import { DiagnosticSeverity, type Diagnostic, type NotebookDocument } from "vscode-languageserver/node";
import type { TextDocument } from "vscode-languageserver-textdocument";
import { lintPython } from "../engine/lint";
import { machineModel } from "../engine/machineHelp";
import { lintNotebook, notebookHostOf } from "../engine/notebook";
import { lintManifest } from "../engine/manifests/lintManifest";
import type { LintDiagnostic, Severity, Fix } from "../engine/types";
import { FILE_TOO_LARGE_CODE } from "../engine/limits";
import { docUrl } from "../docsUrl";
import { asBaselined } from "../editorBaseline";
import { escapeControls } from "../../../common/src/text/controls";
import type { CellFix, RestartOffer } from "../session";
import { manifestKindOfDoc, pathOf, type ServerContext } from "./context";

const SEVERITY: Record<Severity, DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  information: DiagnosticSeverity.Information,
  hint: DiagnosticSeverity.Hint,
};

/** The key of a finding's fix and kernel restart in an OpenDocument or CellState: `code@line:character` of its start. */
export const keyOf = (code: string, line: number, character: number) => `${code}@${line}:${character}`;

/** The LSP diagnostic; messages are escaped by the engine already, escaped again here as a last guard (idempotent). */
function toLsp(d: Omit<LintDiagnostic, "related">, related: Diagnostic["relatedInformation"]): Diagnostic {
  return {
    range: d.range,
    severity: SEVERITY[d.severity],
    code: d.code,
    source: "gpu-pilot",
    message: escapeControls(d.message),
    ...(d.code === FILE_TOO_LARGE_CODE ? {} : { codeDescription: { href: docUrl(d.code) } }),
    ...(related && related.length
      ? { relatedInformation: related.map((r) => ({ ...r, message: escapeControls(r.message) })) }
      : {}),
  };
}

/**
 * The result of one lint, not yet shown: `current()` says whether it is still of the document's
 * newest version (no newer change dispatched or queued), `commit()` publishes it and makes its fixes
 * and GPU001 lines the ones code actions and hovers use.
 */
export interface LintOutcome {
  uri: string;
  version: number;
  current(): boolean;
  commit(): void;
  /** Frees what the lint no longer needs (after publishing: not on the way to the diagnostics). */ dispose?(): void;
}

/**
 * Keeps in `uri`'s OpenDocument the files its lint's launch rules read (`launchDeps`: a launched
 * script and what it imports), so that their change lints it again (lintQueue.ts `fileChanged`);
 * none are kept for a lint that read none.
 */
function keepLaunchDeps(ctx: ServerContext, uri: string, deps: readonly string[] | undefined): void {
  if (deps?.length) ctx.session.ensure(uri).launchDeps = new Set(deps);
  else {
    const open = ctx.session.get(uri);
    if (open) open.launchDeps = undefined;
  }
}

/** Lints a text document (Python or manifest) at its current version; nothing is published yet. */
export function lintTextDocument(ctx: ServerContext, doc: TextDocument): LintOutcome {
  const { connection, session, backlog } = ctx;
  const { trees, inventory } = session;
  const kind = manifestKindOfDoc(doc);
  const text = doc.getText();
  const previous = kind ? undefined : trees.take(doc.uri, text, doc.version);
  const options = ctx.lintOptions(doc.uri);
  const project = kind ? undefined : ctx.projectLookup(doc.uri, options);
  const python = kind
    ? null
    : lintPython(
        text,
        { ...options, ...(project ? { project } : {}), lazyFixValidation: true },
        { previous, incremental: true },
      );
  if (project) session.ensure(doc.uri).projectDeps = project.deps();
  // The model for the machine hovers and inlay hints, which need GPUs in the inventory.
  if (python?.analysis)
    trees.keep(
      doc.uri,
      text,
      python.analysis,
      doc.version,
      python.model && inventory.gpus?.length ? machineModel(python.model) : undefined,
    );
  const manifest = python
    ? null
    : lintManifest(
        doc.getText(),
        kind!,
        { ...ctx.lintOptions(doc.uri), lazyFixValidation: true },
        { previous: session.get(doc.uri)?.takeYaml(), file: pathOf(doc.uri) },
      );
  if (manifest?.yaml) session.ensure(doc.uri).yaml = manifest.yaml;
  if (manifest) keepLaunchDeps(ctx, doc.uri, manifest.deps);
  const result = python ?? manifest!;
  for (const f of result.ruleFailures) connection.console.error(`rule ${f.code} failed on ${doc.uri}: ${f.error}`);
  const byKey = new Map<string, Fix>();
  const baselined = ctx.baselinedOf(doc.uri, result.diagnostics, [text]);
  const diagnostics = result.diagnostics.map((d, i) => {
    if (d.fix) byKey.set(keyOf(d.code, d.range.start.line, d.range.start.character), d.fix);
    const lsp = toLsp(
      d,
      d.related?.map((r) => ({
        location: { uri: r.file ? pathToFileURL(r.file).href : doc.uri, range: r.range },
        message: r.message,
      })),
    );
    return baselined[i] ? asBaselined(lsp) : lsp;
  });
  const lines = new Set(result.diagnostics.filter((d) => d.code === "GPU001").map((d) => d.range.start.line));
  const { uri, version } = doc;
  return {
    uri,
    version,
    current: () => session.documents.get(uri)?.version === version && !backlog.has(uri),
    commit: () => {
      const open = session.ensure(uri);
      open.fixes = byKey;
      open.noEffect = { version, lines };
      ctx.settle(connection.sendDiagnostics({ uri, version, diagnostics }), "textDocument/publishDiagnostics");
    },
    // The old analysis (handed over to the new one unless the lint stopped short: then its trees are
    // freed here, ~0.7 ms on a 5,000-line file, once the diagnostics are out).
    dispose: () => previous?.dispose(),
  };
}

/** Lints a notebook (all cells: the timeline crosses cells) at its current version; nothing is published yet. */
export function lintNotebookDocument(ctx: ServerContext, nb: NotebookDocument): LintOutcome {
  const { connection, session, backlog } = ctx;
  const { trees, inventory } = session;
  const { cells, uris } = ctx.cellsOf(nb);
  const previous = trees.take(nb.uri, null);
  // Fixes are checked when offered (onCodeAction: cellFixParsesCleanly), as a text document's are.
  const options = ctx.lintOptions(nb.uri);
  const project = ctx.projectLookup(nb.uri, options);
  const kernel = session.get(nb.uri)?.kernel;
  const host = notebookHostOf(nb.metadata);
  const { diagnostics, ruleFailures, analysis, model, starts, deps } = lintNotebook(
    cells,
    {
      ...options,
      ...(host ? { notebookHost: host } : {}),
      ...(project ? { project } : {}),
      ...(kernel ? { runningKernel: kernel } : {}),
      lazyFixValidation: true,
    },
    { previous },
    pathOf(nb.uri),
  );
  if (project) session.ensure(nb.uri).projectDeps = project.deps();
  keepLaunchDeps(ctx, nb.uri, deps);
  // With the model of the joined cells for the machine hovers and inlay hints in cells (as a text document's).
  if (analysis)
    trees.keep(
      nb.uri,
      analysis.trees.text,
      analysis,
      nb.version,
      model && inventory.gpus?.length ? machineModel(model) : undefined,
    );
  const firstLine = new Map(starts.map((s) => [s.cell, s.line]));
  const noEffect = new Set(
    diagnostics.filter((d) => d.code === "GPU001").map((d) => firstLine.get(d.cell)! + d.range.start.line),
  );
  for (const f of ruleFailures) connection.console.error(`rule ${f.code} failed on ${nb.uri}: ${f.error}`);
  const perCell = new Map<string, Diagnostic[]>(uris.map((u) => [u, []]));
  const cellFixes = new Map<string, Map<string, CellFix>>(uris.map((u) => [u, new Map()]));
  const restarts = new Map<string, Map<string, RestartOffer>>(uris.map((u) => [u, new Map()]));
  const baselined = ctx.baselinedOf(
    nb.uri,
    diagnostics,
    cells.map((c) => c.text),
  );
  for (const [i, d] of diagnostics.entries()) {
    const uri = uris[d.cell];
    const lsp = toLsp(
      d,
      d.related?.map((r) => ({ location: { uri: uris[r.cell], range: r.range }, message: r.message })),
    );
    perCell.get(uri)!.push(baselined[i] ? asBaselined(lsp) : lsp);
    if (d.kernelRestart)
      restarts.get(uri)!.set(keyOf(d.code, d.range.start.line, d.range.start.character), {
        notebook: nb.uri,
        restart: d.kernelRestart,
      });
    if (d.fix) {
      const cellFix: CellFix = {
        title: d.fix.title,
        safe: d.fix.safe,
        ...(d.fix.note ? { note: d.fix.note } : {}),
        edits: d.fix.edits.map((e) => ({ uri: uris[e.cell], edit: { range: e.range, newText: e.newText } })),
      };
      cellFixes.get(uri)!.set(keyOf(d.code, d.range.start.line, d.range.start.character), cellFix);
    }
  }
  const { uri, version } = nb;
  return {
    uri,
    version,
    current: () => session.notebooks.getNotebookDocument(uri)?.version === version && !backlog.has(uri),
    commit: () => {
      const open = session.ensure(uri);
      for (const [cell, f] of cellFixes) open.cell(cell).fixes = f;
      for (const [cell, r] of restarts) open.cell(cell).restarts = r;
      open.noEffect = { version, lines: noEffect };
      // Only the cells whose diagnostics changed since the last publication.
      for (const [cell, diags] of perCell) {
        const json = JSON.stringify(diags);
        const state = open.cell(cell);
        if (state.published === json) continue;
        state.published = json;
        ctx.settle(connection.sendDiagnostics({ uri: cell, diagnostics: diags }), "textDocument/publishDiagnostics");
      }
    },
    dispose: () => previous?.dispose(),
  };
}
