/**
 * `textDocument/codeAction` and `codeAction/resolve`: the rules' quick fixes (those of the last
 * committed lint, kept in the document's OpenDocument or its cell's CellState, checked when
 * offered), `# noqa` suppression, "Restart kernel on GPU n" for a running kernel's GPU001, the rule
 * documentation, "use the selected GPUs", and the fix-all actions (`source.fixAll.gpuPilot`, the
 * unsafe fixes by name).
 */
import {
  CodeActionKind,
  type CodeAction,
  type WorkspaceEdit,
  type TextEdit as LspTextEdit,
} from "vscode-languageserver/node";
import type { TextDocument } from "vscode-languageserver-textdocument";
import { fixParsesCleanly } from "../engine/lint";
import { useSelectionEdit } from "../engine/machineHelp";
import { cellFixParsesCleanly } from "../engine/notebook";
import { fixAllPython, fixAllNotebook } from "../engine/fixAll";
import { fixAllManifest, manifestFixParsesCleanly } from "../engine/manifests/lintManifest";
import { manifestNoqaEdit } from "../engine/manifests/noqa";
import type { Fix } from "../engine/types";
import { noqaEdit } from "../editorHelpers";
import { SHOW_RULE_DOC_COMMAND } from "../../../common/src/lsp/protocol";
import { UNSAFE_FIXES_KIND } from "../../../common/src/lsp/commandIds";
import { RESTART_KERNEL_COMMAND } from "../../../common/src/kernel/runningKernel";
import type { CellFix } from "../session";
import { manifestKindOfDoc, pathOf, type ServerContext } from "./context";
import { keyOf } from "./diagnostics";
import { shifted, shiftedRange, withCellModel, withModel } from "./models";

function editOf(uri: string, fix: Fix | CellFix): WorkspaceEdit {
  const changes: Record<string, LspTextEdit[]> = {};
  for (const e of fix.edits) {
    if ("uri" in e) (changes[e.uri] ??= []).push(e.edit);
    else (changes[uri] ??= []).push(e);
  }
  return { changes };
}

const wants = (only: string[] | undefined, kind: string) =>
  !only || only.some((k) => kind === k || kind.startsWith(`${k}.`));

/**
 * `source.fixAll.gpuPilot`: every safe fix, as whole-document (or whole-cell) replacements; with
 * `unsafe`, {@link UNSAFE_FIXES_KIND}: every fix, the unsafe ones (which may change what the code
 * does) too. Null when there is nothing to apply.
 */
function fixAllAction(ctx: ServerContext, uri: string, unsafe = false): CodeAction | null {
  const a = fixAllEdit(ctx, uri, unsafe);
  if (!a) return null;
  return unsafe
    ? { title: "GPU Pilot: Apply all fixes, unsafe ones included", kind: UNSAFE_FIXES_KIND, edit: a }
    : { title: "GPU Pilot: Fix all auto-fixable problems", kind: `${CodeActionKind.SourceFixAll}.gpuPilot`, edit: a };
}

/** The edit of {@link fixAllAction}, or null when no fix applies. */
function fixAllEdit(ctx: ServerContext, uri: string, unsafe: boolean): WorkspaceEdit | null {
  const { documents, notebooks } = ctx.session;
  const nb = notebooks.findNotebookDocumentForCell(uri);
  const full = (doc: TextDocument, text: string): LspTextEdit => ({
    range: { start: { line: 0, character: 0 }, end: doc.positionAt(doc.getText().length) },
    newText: text,
  });
  if (nb) {
    const { cells, uris } = ctx.cellsOf(nb);
    const r = fixAllNotebook(cells, ctx.lintOptions(nb.uri), unsafe);
    if (!r.applied) return null;
    const changes: Record<string, LspTextEdit[]> = {};
    r.cells.forEach((c, i) => {
      const doc = documents.get(uris[i]);
      if (doc && c.text !== cells[i].text) changes[uris[i]] = [full(doc, c.text)];
    });
    return { changes };
  }
  const doc = documents.get(uri);
  if (!doc) return null;
  const kind = manifestKindOfDoc(doc);
  const r = kind
    ? fixAllManifest(doc.getText(), kind, ctx.lintOptions(uri), unsafe, pathOf(uri))
    : fixAllPython(doc.getText(), ctx.lintOptions(uri), unsafe);
  if (!r.applied) return null;
  return { changes: { [uri]: [full(doc, r.text)] } };
}

/**
 * Whether a notebook cell's fix (edits of its notebook's cells) still adds no syntax error to the
 * notebook's code (notebook.ts `cellFixParsesCleanly`); false when its cells are no longer open.
 */
function cellFixValid(ctx: ServerContext, cellUri: string, fix: CellFix): boolean {
  const nb = ctx.session.notebooks.findNotebookDocumentForCell(cellUri);
  if (!nb) return false;
  const { cells, uris } = ctx.cellsOf(nb);
  const edits = fix.edits.map((e) => ({ cell: uris.indexOf(e.uri), range: e.edit.range, newText: e.edit.newText }));
  return edits.every((e) => e.cell >= 0) && cellFixParsesCleanly(cells, edits);
}

/** The fixes of the last committed lint of a text document, or of a notebook cell (its notebook's lint). */
function fixesOf(ctx: ServerContext, uri: string): ReadonlyMap<string, Fix | CellFix> | undefined {
  return ctx.session.get(uri)?.fixes ?? ctx.session.cellOf(uri)?.fixes;
}

/** Registers the code action handlers. */
export function registerCodeActions(ctx: ServerContext): void {
  const { connection, session } = ctx;
  connection.onCodeAction(async (params) => {
    await ctx.engineReady;
    const { documents, trees, inventory } = session;
    const uri = params.textDocument.uri;
    const only = params.context.only;
    const actions: CodeAction[] = [];
    // Unsafe fixes only when asked for by name (gpuPilot.applyUnsafeFixes), never for a broader kind.
    if (only?.includes(UNSAFE_FIXES_KIND)) {
      const a = fixAllAction(ctx, uri, true);
      return a ? [a] : [];
    }
    if (only && wants(only, `${CodeActionKind.SourceFixAll}.gpuPilot`)) {
      const a = fixAllAction(ctx, uri);
      return a ? [a] : [];
    }
    if (!wants(only, CodeActionKind.QuickFix)) return [];
    const known = fixesOf(ctx, uri);
    const doc = documents.get(uri);
    const kind = doc ? manifestKindOfDoc(doc) : null;
    for (const d of params.context.diagnostics) {
      if (d.source !== "gpu-pilot") continue;
      const code = String(d.code);
      const fix = known?.get(keyOf(code, d.range.start.line, d.range.start.character));
      const valid =
        fix &&
        (!("edits" in fix) ||
          fix.edits.length === 0 ||
          ("uri" in fix.edits[0]
            ? cellFixValid(ctx, uri, fix as CellFix)
            : !doc ||
              (kind
                ? manifestFixParsesCleanly(doc.getText(), kind, fix as Fix)
                : fixParsesCleanly(doc.getText(), fix as Fix, false, trees.treeOf(uri, doc.version)))));
      if (fix && valid)
        actions.push({
          title: fix.title,
          kind: CodeActionKind.QuickFix,
          diagnostics: [d],
          isPreferred: fix.safe,
          edit: editOf(uri, fix),
        });
      if (doc) {
        const edit = kind
          ? manifestNoqaEdit(doc.getText(), kind, d.range.start.line, code)
          : noqaEdit(doc.getText(), d.range.start.line, code, trees.treeOf(uri, doc.version));
        if (edit)
          actions.push({
            title: `Disable ${code} for this ${kind === "dockerfile" ? "instruction" : "line"}`,
            kind: CodeActionKind.QuickFix,
            diagnostics: [d],
            edit: { changes: { [uri]: [edit] } },
          });
      }
      const restart = session.cellOf(uri)?.restarts.get(keyOf(code, d.range.start.line, d.range.start.character));
      if (restart) {
        const title = restart.restart.devices
          ? `Restart kernel on GPU ${restart.restart.devices.join(",")}`
          : "Restart kernel on the selected GPUs";
        actions.push({
          title,
          kind: CodeActionKind.QuickFix,
          diagnostics: [d],
          isPreferred: !fix,
          command: { title, command: RESTART_KERNEL_COMMAND, arguments: [restart.notebook, restart.restart.devices] },
        });
      }
      actions.push({
        title: `Show documentation for ${code}`,
        kind: CodeActionKind.QuickFix,
        diagnostics: [d],
        command: { title: `Show documentation for ${code}`, command: SHOW_RULE_DOC_COMMAND, arguments: [code] },
      });
    }
    const useSel = inventory.selection.length
      ? (withModel(ctx, uri, (m) => useSelectionEdit(m, params.range.start, inventory.selection)) ??
        withCellModel(ctx, uri, (m, start) => {
          const e = useSelectionEdit(m, shifted(params.range.start, start.line), inventory.selection);
          return e && { ...e, range: shiftedRange(e.range, -start.line) };
        }))
      : null;
    if (useSel)
      actions.push({
        title: useSel.title,
        kind: CodeActionKind.QuickFix,
        edit: { changes: { [uri]: [{ range: useSel.range, newText: useSel.newText }] } },
      });
    if ((!params.context.diagnostics.some((d) => d.source === "gpu-pilot") || !only) && actions.length) {
      // The light bulb asks on every cursor move: a whole fix-all here cost 8 s on a 10 KB file with
      // 332 findings. A client that resolves edits gets the action without its edit,
      // offered when the last lint found a safe fix, and the edit is computed only when it is chosen.
      const title = "Fix all auto-fixable GPU Pilot problems";
      if (session.clientResolvesEdits) {
        const anySafe = [...(fixesOf(ctx, uri)?.values() ?? [])].some((f) => f.safe);
        if (anySafe) actions.push({ title, kind: CodeActionKind.QuickFix, data: { gpuPilotFixAll: uri } });
      } else {
        const all = fixAllAction(ctx, uri);
        if (all) actions.push({ ...all, kind: CodeActionKind.QuickFix, title });
      }
    }
    return actions;
  });

  connection.onCodeActionResolve(async (action) => {
    const uri = (action.data as { gpuPilotFixAll?: unknown } | undefined)?.gpuPilotFixAll;
    if (typeof uri !== "string") return action;
    await ctx.engineReady;
    const all = fixAllAction(ctx, uri);
    return { ...action, edit: all?.edit ?? { changes: {} } };
  });
}
