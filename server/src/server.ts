/**
 * The GPU Pilot language server (wiring only): keeps documents and notebooks in sync, lints them
 * with the engine (serially, coalescing rapid edits), publishes diagnostics with code,
 * codeDescription and relatedInformation, and answers code actions with the rules' fixes.
 */
import {
  createConnection, ProposedFeatures, TextDocuments, NotebookDocuments, TextDocumentSyncKind,
  CodeActionKind, DiagnosticSeverity, type Diagnostic, type CodeAction, type InitializeResult,
  type WorkspaceEdit, type TextEdit as LspTextEdit, type NotebookDocument,
} from "vscode-languageserver/node";
import { TextDocument } from "vscode-languageserver-textdocument";
import { initEngine, lintPython, type LintOptions } from "./engine/lint";
import { lintNotebook, type CellInput } from "./engine/notebook";
import type { LintDiagnostic, Severity, Fix } from "./engine/types";
import { InventoryNotification, SettingsNotification, type InventoryParams, type EditorLintSettings } from "./protocol";
import { docUrl } from "./docsUrl";

const connection = createConnection(ProposedFeatures.all);
const documents = new TextDocuments(TextDocument);
const notebooks = new NotebookDocuments(documents);

/** Fixes of the last lint, by document URI, keyed by `code@line:char`. */
const fixes = new Map<string, Map<string, { fix: Fix | CellFix; diagnostic: Diagnostic }>>();
interface CellFix { title: string; safe: boolean; note?: string; edits: Array<{ uri: string; edit: LspTextEdit }> }

let settings: Partial<EditorLintSettings> = {};
let inventory: InventoryParams = { gpus: null, selection: [] };
let engineReady: Promise<void> = Promise.resolve();

const SEVERITY: Record<Severity, DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error, warning: DiagnosticSeverity.Warning,
  information: DiagnosticSeverity.Information, hint: DiagnosticSeverity.Hint,
};

function lintOptions(): LintOptions {
  return {
    select: settings.select, ignore: settings.ignore, severity: settings.severity,
    eagerInitModules: settings.eagerInitModules,
    machine: { gpuCount: inventory.gpus ? inventory.gpus.length : null, uuids: inventory.gpus?.map((g) => g.uuid) ?? [] },
  };
}

const keyOf = (code: string, line: number, character: number) => `${code}@${line}:${character}`;

function toLsp(d: Omit<LintDiagnostic, "related">, related: Diagnostic["relatedInformation"]): Diagnostic {
  return {
    range: d.range, severity: SEVERITY[d.severity], code: d.code, source: "gpu-pilot", message: d.message,
    codeDescription: { href: docUrl(d.code) },
    ...(related && related.length ? { relatedInformation: related } : {}),
    data: { name: d.name },
  };
}

function lintTextDocument(doc: TextDocument): void {
  const result = lintPython(doc.getText(), lintOptions());
  result.tree.delete();
  for (const f of result.ruleFailures) connection.console.error(`rule ${f.code} failed on ${doc.uri}: ${f.error}`);
  const byKey = new Map<string, { fix: Fix; diagnostic: Diagnostic }>();
  const diagnostics = result.diagnostics.map((d) => {
    const lsp = toLsp(d, d.related?.map((r) => ({ location: { uri: doc.uri, range: r.range }, message: r.message })));
    if (d.fix) byKey.set(keyOf(d.code, d.range.start.line, d.range.start.character), { fix: d.fix, diagnostic: lsp });
    return lsp;
  });
  fixes.set(doc.uri, byKey);
  void connection.sendDiagnostics({ uri: doc.uri, version: doc.version, diagnostics });
}

function lintNotebookDocument(nb: NotebookDocument): void {
  const cells: CellInput[] = [];
  const uris: string[] = [];
  for (const cell of nb.cells) {
    const doc = documents.get(cell.document);
    uris.push(cell.document);
    cells.push({ kind: cell.kind === 2 && (!doc || doc.languageId === "python") ? "code" : "markup", text: doc?.getText() ?? "" });
  }
  const { diagnostics, ruleFailures } = lintNotebook(cells, lintOptions());
  for (const f of ruleFailures) connection.console.error(`rule ${f.code} failed on ${nb.uri}: ${f.error}`);
  const perCell = new Map<string, Diagnostic[]>(uris.map((u) => [u, []]));
  for (const u of uris) fixes.set(u, new Map());
  for (const d of diagnostics) {
    const uri = uris[d.cell];
    const lsp = toLsp(d, d.related?.map((r) => ({ location: { uri: uris[r.cell], range: r.range }, message: r.message })));
    perCell.get(uri)!.push(lsp);
    if (d.fix) {
      const cellFix: CellFix = { title: d.fix.title, safe: d.fix.safe, ...(d.fix.note ? { note: d.fix.note } : {}), edits: d.fix.edits.map((e) => ({ uri: uris[e.cell], edit: { range: e.range, newText: e.newText } })) };
      fixes.get(uri)!.set(keyOf(d.code, d.range.start.line, d.range.start.character), { fix: cellFix, diagnostic: lsp });
    }
  }
  for (const [uri, diags] of perCell) void connection.sendDiagnostics({ uri, diagnostics: diags });
}

// Serial linting with coalescing: a burst of edits to one document yields one lint.
const pending = new Set<string>();
let scheduled = false;
function schedule(uri: string): void {
  pending.add(uri);
  if (scheduled) return;
  scheduled = true;
  setImmediate(() => void flush());
}
async function flush(): Promise<void> {
  await engineReady;
  scheduled = false;
  const uris = [...pending];
  pending.clear();
  const notebooksDone = new Set<string>();
  for (const uri of uris) {
    try {
      const nb = notebooks.findNotebookDocumentForCell(uri) ?? notebooks.getNotebookDocument(uri);
      if (nb) {
        if (!notebooksDone.has(nb.uri)) { notebooksDone.add(nb.uri); lintNotebookDocument(nb); }
        continue;
      }
      const doc = documents.get(uri);
      if (doc && doc.languageId === "python") lintTextDocument(doc);
    } catch (e) {
      connection.console.error(`linting ${uri} failed: ${e instanceof Error ? e.stack : String(e)}`);
    }
  }
}
function relintAll(): void {
  for (const d of documents.all()) schedule(d.uri);
}

connection.onInitialize((params): InitializeResult => {
  const init = params.initializationOptions as Partial<EditorLintSettings> | undefined;
  if (init) settings = init;
  engineReady = initEngine().catch((e) => {
    connection.console.error(`GPU Pilot could not load its Python parser: ${e instanceof Error ? e.message : String(e)}`);
  });
  return {
    capabilities: {
      textDocumentSync: TextDocumentSyncKind.Incremental,
      notebookDocumentSync: { notebookSelector: [{ notebook: { notebookType: "jupyter-notebook" }, cells: [{ language: "python" }] }] },
      codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix, `${CodeActionKind.SourceFixAll}.gpuPilot`] },
    },
    serverInfo: { name: "gpu-pilot", version: "0.1.0" },
  };
});

documents.onDidOpen((e) => schedule(e.document.uri));
documents.onDidChangeContent((e) => schedule(e.document.uri));
documents.onDidClose((e) => {
  fixes.delete(e.document.uri);
  if (!notebooks.findNotebookDocumentForCell(e.document.uri)) void connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] });
});
notebooks.onDidOpen((nb) => schedule(nb.uri));
notebooks.onDidChange((e) => schedule(e.notebookDocument.uri));
notebooks.onDidClose((nb) => { for (const c of nb.cells) void connection.sendDiagnostics({ uri: c.document, diagnostics: [] }); });

connection.onNotification(InventoryNotification.type, (params) => { inventory = params; relintAll(); });
connection.onNotification(SettingsNotification.type, (params) => { settings = { ...settings, ...params }; relintAll(); });

function editOf(uri: string, fix: Fix | CellFix): WorkspaceEdit {
  if ("edits" in fix && fix.edits.length && "uri" in fix.edits[0]) {
    const changes: Record<string, LspTextEdit[]> = {};
    for (const e of (fix as CellFix).edits) (changes[e.uri] ??= []).push(e.edit);
    return { changes };
  }
  return { changes: { [uri]: (fix as Fix).edits } };
}

connection.onCodeAction((params) => {
  const uri = params.textDocument.uri;
  const known = fixes.get(uri);
  if (!known) return [];
  const actions: CodeAction[] = [];
  const only = params.context.only;
  const wantsQuickFix = !only || only.some((k) => k === CodeActionKind.QuickFix || CodeActionKind.QuickFix.startsWith(k));
  if (wantsQuickFix) {
    for (const d of params.context.diagnostics) {
      if (d.source !== "gpu-pilot") continue;
      const hit = known.get(keyOf(String(d.code), d.range.start.line, d.range.start.character));
      if (!hit) continue;
      actions.push({ title: hit.fix.title, kind: CodeActionKind.QuickFix, diagnostics: [d], isPreferred: hit.fix.safe, edit: editOf(uri, hit.fix) });
    }
  }
  return actions;
});

connection.listen();
documents.listen(connection);
notebooks.listen(connection);
