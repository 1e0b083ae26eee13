/**
 * The GPU Pilot language server (wiring only): keeps documents and notebooks in sync, lints them
 * with the engine (serially, coalescing rapid edits), publishes diagnostics with code,
 * codeDescription and relatedInformation, and answers code actions (the rules' quick fixes,
 * `# noqa` suppression, rule documentation, `source.fixAll.gpuPilot`) and hovers on noqa codes.
 */
import {
  createConnection, ProposedFeatures, TextDocuments, NotebookDocuments, TextDocumentSyncKind,
  CodeActionKind, DiagnosticSeverity, FileChangeType, MarkupKind, type Diagnostic, type CodeAction, type InitializeResult,
  type WorkspaceEdit, type TextEdit as LspTextEdit, type NotebookDocument, type Hover, type InlayHint,
} from "vscode-languageserver/node";
import { TextDocument } from "vscode-languageserver-textdocument";
import { fileURLToPath } from "node:url";
import { initEngine, lintPython, analyzePython, fixParsesCleanly, type LintOptions } from "./engine/lint";
import { DocumentTrees } from "./incremental";
import { machineHover, machineInlayHints, machineModel, useSelectionEdit, type MachineModel } from "./engine/machineHelp";
import { freeText } from "./engine/machine";
import { cellFixParsesCleanly, cellInJoined, lintNotebook, type CellInput, type CellStart } from "./engine/notebook";
import { fixAllPython, fixAllNotebook } from "./engine/fixAll";
import { partitionHover, PartitionGpuCache } from "./slurm/partitionHover";
import { resolveLintOptions } from "./engine/options";
import { diskReader, lookupOptions, ProjectIndex, type FileLookup } from "./engine/python/project";
import { ruleByCode } from "./engine/rules/index";
import type { LintDiagnostic, Severity, Fix } from "./engine/types";
import type { ConfigProblem } from "./engine/config";
import { CheckFileRequest, type CheckFileResult, checkEditorSettings, checkInventoryParams, InventoryNotification, RunFactsRequest, type RunFactsResult, SettingsNotification, SHOW_RULE_DOC_COMMAND, type InventoryParams, type EditorLintSettings } from "../../common/src/lsp/protocol";
import { docUrl } from "./docsUrl";
import { escapeControls } from "../../common/src/text/controls";
import { fileTooLarge, FILE_TOO_LARGE_CODE } from "./engine/limits";
import { ruleMarkdown, noqaEdit, noqaCodeAt } from "./editorHelpers";
import { lintManifest, fixAllManifest, manifestFixParsesCleanly, manifestKindOf, type ManifestKind } from "./engine/manifests/lintManifest";
import type { YamlParse } from "./engine/manifests/yaml";
import { manifestNoqaEdit, manifestNoqaCodeAt } from "./engine/manifests/noqa";
import { checkCells, checkFileOnDisk, checkText } from "./agentCheck";
import { runFacts } from "./engine/runFacts";
import { pathToFileURL } from "node:url";
import { ChangeBacklog } from "./scheduling";
import { IdleHeapTrim, type GcFunction } from "./heapTrim";
import { IPCMessageReader, StreamMessageReader, type MessageReader } from "vscode-languageserver/node";
import { UNSAFE_FIXES_KIND } from "../../common/src/lsp/commandIds";
import { asBaselined, baselinedIn, BaselineFiles, type EditorFinding } from "./editorBaseline";
import { checkRunningKernelParams, RESTART_KERNEL_COMMAND, RUNNING_KERNEL_METHOD, type RunningKernelFacts } from "../../common/src/kernel/runningKernel";
import type { KernelRestart } from "./engine/types";

/** Changes read from the transport but not yet dispatched, per document (see scheduling.ts). */
const backlog = new ChangeBacklog();
const connection = createConnection(ProposedFeatures.all, {
  messageStrategy: { handleMessage: (message, next) => { backlog.dispatched(message); return next(message); } },
});
/**
 * A second reader on the transport the connection chose from the command line (`--stdio`,
 * `--node-ipc`), which only notes arrivals in {@link backlog}. With another transport (socket,
 * pipe) there is none: every lint then counts as current, as before.
 */
function observeArrivals(): MessageReader | null {
  if (process.argv.includes("--node-ipc")) return new IPCMessageReader(process);
  if (process.argv.includes("--stdio")) return new StreamMessageReader(process.stdin);
  return null;
}
const documents = new TextDocuments(TextDocument);
const notebooks = new NotebookDocuments(documents);

interface CellFix { title: string; safe: boolean; note?: string; edits: Array<{ uri: string; edit: LspTextEdit }> }
/** Fixes of the last lint, by document URI, keyed by `code@line:char`. */
const fixes = new Map<string, Map<string, Fix | CellFix>>();
/**
 * Per Python document: the 0-based lines of its last GPU001 findings (environment writes with no
 * effect because CUDA was already initialised). The machine hovers and inlay hints take the
 * engine's verdict from here instead of treating every write as effective.
 */
const noEffectLines = new Map<string, { version: number; lines: Set<number> }>();

/**
 * Each open notebook's running kernel, as the client's probe last saw it (gpuPilot/runningKernel,
 * issue 42 item 2), by notebook URI. Absent: not known (no kernel access, no kernel, the probe
 * timed out): the notebook lint is the static one.
 */
const runningKernels = new Map<string, RunningKernelFacts>();
/** Per notebook cell URI: the restart each GPU001 finding of the running kernel offers, keyed as {@link fixes}. */
const kernelRestarts = new Map<string, Map<string, { notebook: string; restart: KernelRestart }>>();

let settings: Partial<EditorLintSettings> = {};
let inventory: InventoryParams = { gpus: null, selection: [] };
/** The workspace folders (from `initialize`): the pyproject.toml lookup does not go above them. */
let workspaceRoots: string[] = [];
let engineReady: Promise<void> = Promise.resolve();
const configProblemsShown = new Set<string>();

/**
 * Handles a promise the connection returned (a request to the client, or a notification written to
 * the transport): a rejection is logged, never left unhandled. Node ends a process on an unhandled
 * rejection, and a minimal client answers `window/showMessageRequest` with MethodNotFound (the
 * server died on a pyproject.toml with one bad key). `what` names the message in the log.
 * `p` is taken as `unknown`: `window.showWarningMessage(message)` is typed `void` without actions,
 * yet sends `window/showMessageRequest` and returns its promise.
 */
function settle(p: unknown, what: string): void {
  if (typeof (p as Promise<unknown> | undefined)?.catch !== "function") return;
  (p as Promise<unknown>).catch((e: unknown) => {
    try { connection.console.log(`GPU Pilot: ${what} failed: ${e instanceof Error ? e.message : String(e)}`); } catch { /* the connection is gone */ }
  });
}

const SEVERITY: Record<Severity, DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error, warning: DiagnosticSeverity.Warning,
  information: DiagnosticSeverity.Information, hint: DiagnosticSeverity.Hint,
};

/** The path of a file URI, or null (untitled buffers, notebook cells of unsaved notebooks, other schemes). */
function pathOf(uri: string): string | null {
  try { return uri.startsWith("file:") ? fileURLToPath(uri) : null; } catch { return null; }
}

/**
 * The project's own modules as the open files import them (python/project.ts): an open document's
 * text (saved or not) first, then the file on disk through the safe reader.
 */
const projectIndex = new ProjectIndex((file) => {
  for (const d of documents.all()) if (pathOf(d.uri) === file) return d.getText();
  return diskReader(file);
});
/** The project files each open document's (or notebook's) last lint read through {@link projectIndex}, by URI. */
const projectDeps = new Map<string, ReadonlySet<string>>();

/** The project lookup for a Python document or notebook with a file path (none for an untitled one). */
function projectLookup(uri: string, options: LintOptions): FileLookup | undefined {
  const path = pathOf(uri);
  return path ? projectIndex.lookupFor(path, lookupOptions(options)) : undefined;
}

/**
 * After the project file at `path` changed (an edit, a save on disk, a close that reverts to the
 * disk's text): forgets what was read from it and lints again the open documents whose last lint
 * read it (not `except`, which is linted anyway).
 */
function projectFileChanged(path: string, except?: string): void {
  if (!projectIndex.invalidate(path)) return;
  for (const [uri, deps] of projectDeps) if (uri !== except && deps.has(path)) schedule(uri);
}

/** Options for a document: editor settings + nearest pyproject + torch pin; config problems shown once. */
/**
 * Each open document's resolved options (its pyproject.toml, torch pin, job scripts and settings),
 * kept until a setting or a watched file (pyproject.toml, requirements, environment files, job
 * scripts: the client's file watcher) changes or the document closes: resolving them looks up
 * files on the way to the workspace root, ~0.3 ms a keystroke. Other URIs (notebooks, runFacts
 * texts) are resolved each time.
 */
const resolvedOptions = new Map<string, ReturnType<typeof resolveLintOptions>>();

function lintOptions(uri: string): LintOptions {
  let resolved = resolvedOptions.get(uri);
  if (!resolved) {
    resolved = resolveOptionsOf(uri);
    if (documents.get(uri)) resolvedOptions.set(uri, resolved); // open text documents only (their close forgets it)
  }
  // The live inventory (nvidia-smi on this machine) wins; without one, the pyproject's `[tool.gpu-pilot] gpus`/`inventory`.
  const live = inventory.gpus ? { gpuCount: inventory.gpus.length, uuids: inventory.gpus.map((g) => g.uuid) } : null;
  return { ...resolved.options, maxFileSizeKB: settings.maxFileSizeKB, machine: live ?? resolved.options.machine ?? { gpuCount: null, uuids: [] } };
}

/** resolveLintOptions for a document's file, its problems shown once each (log and a warning). */
function resolveOptionsOf(uri: string): ReturnType<typeof resolveLintOptions> {
  const resolved = resolveLintOptions(pathOf(uri), {
    select: settings.select, ignore: settings.ignore, severity: settings.severity, eagerInitModules: settings.eagerInitModules,
    ...(typeof settings.preview === "boolean" ? { preview: settings.preview } : {}),
    ...(typeof settings.targetTorch === "string" ? { targetTorch: settings.targetTorch } : {}),
  }, settings.configurationPreference ?? "editorFirst", {}, workspaceRoots);
  showConfigProblems(resolved.problems);
  return resolved;
}

/**
 * Logs each configuration problem (at most 21 a file: config.ts lists 20, then counts the rest)
 * and shows ONE warning per file and content, naming the first problem and how many there are
 * (a pyproject.toml with 30,000 bad keys opened 30,000 pop-ups). A file is warned
 * about again only when its problems change (a watched-file change clears the memory).
 */
function showConfigProblems(problems: readonly ConfigProblem[]): void {
  const byFile = new Map<string, ConfigProblem[]>();
  for (const p of problems) byFile.set(p.file, [...(byFile.get(p.file) ?? []), p]);
  for (const [path, list] of byFile) {
    const key = JSON.stringify(list.map((p) => [p.file, p.line ?? null, p.message]));
    if (configProblemsShown.has(key)) continue;
    configProblemsShown.add(key);
    const file = escapeControls(path);
    for (const p of list) connection.console.warn(`${file}${p.line ? `:${p.line}` : ""}: ${escapeControls(p.message)}`);
    const first = list[0];
    const more = list.length > 1 ? ` (and more: ${list.length === 2 ? "1 other problem" : "other problems"} in the GPU Pilot output)` : "";
    settle(connection.window.showWarningMessage(`GPU Pilot: ${file}${first.line ? `, line ${first.line}` : ""}: ${escapeControls(first.message)}${more}. Linting goes on without ${list.length > 1 ? "them" : "it"}.`), "window/showMessageRequest");
  }
}

const keyOf = (code: string, line: number, character: number) => `${code}@${line}:${character}`;

/** Baseline files named by open documents' pyproject.toml (editorBaseline.ts); problems logged once. */
const baselineFiles = new BaselineFiles((m) => connection.console.warn(escapeControls(m)));

/**
 * Which of a document's findings its pyproject's baseline holds (all false without one).
 * @param texts the document's text, or each notebook cell's.
 */
function baselinedOf(uri: string, findings: readonly EditorFinding[], texts: readonly string[]): boolean[] {
  const path = findings.length ? pathOf(uri) : null;
  const named = path ? (resolvedOptions.get(uri) ?? resolveOptionsOf(uri)).baseline : null;
  const baseline = named ? baselineFiles.get(named) : null;
  return baseline ? baselinedIn(baseline, path!, findings, texts) : findings.map(() => false);
}

/** The LSP diagnostic; messages are escaped by the engine already, escaped again here as a last guard (idempotent). */
function toLsp(d: Omit<LintDiagnostic, "related">, related: Diagnostic["relatedInformation"]): Diagnostic {
  return {
    range: d.range, severity: SEVERITY[d.severity], code: d.code, source: "gpu-pilot", message: escapeControls(d.message),
    ...(d.code === FILE_TOO_LARGE_CODE ? {} : { codeDescription: { href: docUrl(d.code) } }),
    ...(related && related.length ? { relatedInformation: related.map((r) => ({ ...r, message: escapeControls(r.message) })) } : {}),
  };
}

/** The manifest kind of a document (Dockerfile, compose file, other YAML), or null for Python. */
function manifestKindOfDoc(doc: TextDocument): ManifestKind | null {
  return manifestKindOf(pathOf(doc.uri) ?? doc.uri, doc.languageId);
}

/** Syntax trees of open Python documents, kept across edits for incremental parsing. */
const trees = new DocumentTrees();

/**
 * The result of one lint, not yet shown: `current()` says whether it is still of the document's
 * newest version (no newer change dispatched or queued), `commit()` publishes it and makes its fixes
 * and GPU001 lines the ones code actions and hovers use.
 */
interface LintOutcome { uri: string; version: number; current(): boolean; commit(): void; /** Frees what the lint no longer needs (after publishing: not on the way to the diagnostics). */ dispose?(): void }

/**
 * Each open YAML manifest's parsed documents from its last lint (manifests/yaml.ts YamlParse): the
 * next version's lint parses again only the documents an edit touches. Taken out when used (the
 * documents are reused), forgotten when the document closes.
 */
const keptYaml = new Map<string, YamlParse>();
function takeYaml(uri: string): YamlParse | undefined {
  const y = keptYaml.get(uri);
  keptYaml.delete(uri);
  return y;
}

/** Lints a text document (Python or manifest) at its current version; nothing is published yet. */
function lintTextDocument(doc: TextDocument): LintOutcome {
  const kind = manifestKindOfDoc(doc);
  const text = doc.getText();
  const previous = kind ? undefined : trees.take(doc.uri, text, doc.version);
  const options = lintOptions(doc.uri);
  const project = kind ? undefined : projectLookup(doc.uri, options);
  const python = kind ? null : lintPython(text, { ...options, ...(project ? { project } : {}), lazyFixValidation: true }, { previousTree: previous, incremental: true });
  if (project) projectDeps.set(doc.uri, project.deps());
  // The model for the machine hovers and inlay hints, which need GPUs in the inventory.
  if (python?.tree) trees.keep(doc.uri, text, python.tree, doc.version, python.model && inventory.gpus?.length ? machineModel(python.model) : undefined);
  const manifest = python ? null : lintManifest(doc.getText(), kind!, { ...lintOptions(doc.uri), lazyFixValidation: true }, { previous: takeYaml(doc.uri), file: pathOf(doc.uri) });
  if (manifest?.yaml) keptYaml.set(doc.uri, manifest.yaml);
  const result = python ?? manifest!;
  for (const f of result.ruleFailures) connection.console.error(`rule ${f.code} failed on ${doc.uri}: ${f.error}`);
  const byKey = new Map<string, Fix>();
  const baselined = baselinedOf(doc.uri, result.diagnostics, [text]);
  const diagnostics = result.diagnostics.map((d, i) => {
    if (d.fix) byKey.set(keyOf(d.code, d.range.start.line, d.range.start.character), d.fix);
    const lsp = toLsp(d, d.related?.map((r) => ({ location: { uri: doc.uri, range: r.range }, message: r.message })));
    return baselined[i] ? asBaselined(lsp) : lsp;
  });
  const lines = new Set(result.diagnostics.filter((d) => d.code === "GPU001").map((d) => d.range.start.line));
  const { uri, version } = doc;
  return {
    uri, version,
    current: () => documents.get(uri)?.version === version && !backlog.has(uri),
    commit: () => {
      fixes.set(uri, byKey);
      noEffectLines.set(uri, { version, lines });
      settle(connection.sendDiagnostics({ uri, version, diagnostics }), "textDocument/publishDiagnostics");
    },
    // The edited old tree: deleting it (~0.7 ms on a 5,000-line file) waits until the diagnostics are out.
    dispose: () => previous?.delete(),
  };
}

/** The cells of a notebook as engine input, with their URIs. */
function cellsOf(nb: NotebookDocument): { cells: CellInput[]; uris: string[] } {
  const cells: CellInput[] = [];
  const uris: string[] = [];
  for (const cell of nb.cells) {
    const doc = documents.get(cell.document);
    uris.push(cell.document);
    cells.push({ kind: cell.kind === 2 && (!doc || doc.languageId === "python") ? "code" : "markup", text: doc?.getText() ?? "" });
  }
  return { cells, uris };
}

/**
 * The diagnostics last published per notebook cell URI (as JSON): a notebook lint publishes only
 * the cells whose diagnostics changed. Entries go when the cell closes.
 */
const cellPublished = new Map<string, string>();

/** Lints a notebook (all cells: the timeline crosses cells) at its current version; nothing is published yet. */
function lintNotebookDocument(nb: NotebookDocument): LintOutcome {
  const { cells, uris } = cellsOf(nb);
  const previous = trees.take(nb.uri, null);
  // Fixes are checked when offered (onCodeAction: cellFixParsesCleanly), as a text document's are.
  const options = lintOptions(nb.uri);
  const project = projectLookup(nb.uri, options);
  const kernel = runningKernels.get(nb.uri);
  const { diagnostics, ruleFailures, tree, model, starts } = lintNotebook(cells, { ...options, ...(project ? { project } : {}), ...(kernel ? { runningKernel: kernel } : {}), lazyFixValidation: true }, { previous });
  if (project) projectDeps.set(nb.uri, project.deps());
  // With the model of the joined cells for the machine hovers and inlay hints in cells (as a text document's).
  if (tree) trees.keep(nb.uri, tree.text, tree, nb.version, model && inventory.gpus?.length ? machineModel(model) : undefined);
  const firstLine = new Map(starts.map((s) => [s.cell, s.line]));
  const noEffect = new Set(diagnostics.filter((d) => d.code === "GPU001").map((d) => firstLine.get(d.cell)! + d.range.start.line));
  for (const f of ruleFailures) connection.console.error(`rule ${f.code} failed on ${nb.uri}: ${f.error}`);
  const perCell = new Map<string, Diagnostic[]>(uris.map((u) => [u, []]));
  const cellFixes = new Map<string, Map<string, CellFix>>(uris.map((u) => [u, new Map()]));
  const restarts = new Map<string, Map<string, { notebook: string; restart: KernelRestart }>>(uris.map((u) => [u, new Map()]));
  const baselined = baselinedOf(nb.uri, diagnostics, cells.map((c) => c.text));
  for (const [i, d] of diagnostics.entries()) {
    const uri = uris[d.cell];
    const lsp = toLsp(d, d.related?.map((r) => ({ location: { uri: uris[r.cell], range: r.range }, message: r.message })));
    perCell.get(uri)!.push(baselined[i] ? asBaselined(lsp) : lsp);
    if (d.kernelRestart) restarts.get(uri)!.set(keyOf(d.code, d.range.start.line, d.range.start.character), { notebook: nb.uri, restart: d.kernelRestart });
    if (d.fix) {
      const cellFix: CellFix = { title: d.fix.title, safe: d.fix.safe, ...(d.fix.note ? { note: d.fix.note } : {}), edits: d.fix.edits.map((e) => ({ uri: uris[e.cell], edit: { range: e.range, newText: e.newText } })) };
      cellFixes.get(uri)!.set(keyOf(d.code, d.range.start.line, d.range.start.character), cellFix);
    }
  }
  const { uri, version } = nb;
  return {
    uri, version,
    current: () => notebooks.getNotebookDocument(uri)?.version === version && !backlog.has(uri),
    commit: () => {
      for (const [cell, f] of cellFixes) fixes.set(cell, f);
      for (const [cell, r] of restarts) kernelRestarts.set(cell, r);
      noEffectLines.set(uri, { version, lines: noEffect });
      for (const [cell, diags] of perCell) {
        const json = JSON.stringify(diags);
        if (cellPublished.get(cell) === json) continue;
        cellPublished.set(cell, json);
        settle(connection.sendDiagnostics({ uri: cell, diagnostics: diags }), "textDocument/publishDiagnostics");
      }
    },
    dispose: () => previous?.delete(),
  };
}

/**
 * Lint scheduling: one document per event-loop turn, only at its newest version. A document with
 * a change still queued (see scheduling.ts) is skipped: that change's dispatch schedules it again.
 * A result is published two turns later, after the transport has been read again, and only if no
 * newer change arrived meanwhile; so diagnostics of an old version are never published, and a
 * burst of edits costs one lint per lint-length of typing instead of one per keystroke.
 * With `$/setTrace` verbose or messages, each lint, skip and drop is traced (`$/logTrace`).
 */
const pending = new Set<string>();
let scheduled = false;
/** Freed heap pages back to the system after a burst of lints (heapTrim.ts; needs `--expose-gc`, nodeFlags.ts). */
const heapTrim = new IdleHeapTrim((globalThis as { gc?: GcFunction }).gc, (r) =>
  connection.tracer.log(`idle: heap trimmed, RSS ${r.rssBeforeMiB} -> ${r.rssAfterMiB} MiB in ${r.ms} ms`));
function schedule(uri: string): void {
  pending.add(uri);
  if (scheduled) return;
  scheduled = true;
  setImmediate(() => settle(lintNext(), "the lint queue"));
}
async function lintNext(): Promise<void> {
  await engineReady;
  const uri = pending.values().next().value;
  if (uri !== undefined) {
    pending.delete(uri);
    try {
      const outcome = lintNow(uri);
      // Two turns: the first lets the transport be read (libuv's poll phase), the second lets the
      // reader deliver what it read (vscode-jsonrpc's reader hands each message over from a
      // setImmediate of its own, which runs after one queued here before that read).
      if (outcome) setImmediate(() => setImmediate(() => { try { publishIfCurrent(outcome); } finally { outcome.dispose?.(); } }));
    } catch (e) {
      connection.console.error(`linting ${uri} failed: ${e instanceof Error ? e.stack : String(e)}`);
    }
  }
  if (pending.size) setImmediate(() => settle(lintNext(), "the lint queue"));
  else { scheduled = false; heapTrim.afterWork(); }
}
/** Lints the text document or notebook `uri` belongs to, or null when it is not linted now (stale, closed, not ours). */
function lintNow(uri: string): LintOutcome | null {
  const nb = notebooks.findNotebookDocumentForCell(uri) ?? notebooks.getNotebookDocument(uri);
  const target = nb ? nb.uri : uri;
  if (nb) for (const cell of nb.cells) pending.delete(cell.document);
  pending.delete(target);
  if (backlog.has(target)) { connection.tracer.log(`lint ${target}: skipped, a newer change is queued`); return null; }
  const t0 = performance.now();
  let outcome: LintOutcome | null = null;
  if (nb) outcome = lintNotebookDocument(nb);
  else {
    const doc = documents.get(uri);
    if (doc && (doc.languageId === "python" || manifestKindOfDoc(doc))) outcome = lintTextDocument(doc);
  }
  if (outcome) connection.tracer.log(`lint ${target} version ${outcome.version}: ${(performance.now() - t0).toFixed(1)} ms`);
  return outcome;
}
function publishIfCurrent(outcome: LintOutcome): void {
  if (outcome.current()) outcome.commit();
  else connection.tracer.log(`lint ${outcome.uri} version ${outcome.version}: not published, the document changed meanwhile`);
}
function relintAll(): void {
  for (const d of documents.all()) schedule(d.uri);
}

/** Whether the client resolves a code action's edit on demand (codeAction/resolve with "edit"). */
let clientResolvesEdits = false;

connection.onInitialize((params): InitializeResult => {
  clientResolvesEdits = params.capabilities.textDocument?.codeAction?.resolveSupport?.properties.includes("edit") ?? false;
  const init = checkEditorSettings(params.initializationOptions);
  settings = init.value;
  for (const p of init.problems) connection.console.warn(`GPU Pilot: initializationOptions: ${p}; the default is used.`);
  workspaceRoots = [
    ...(params.workspaceFolders ?? []).map((f) => pathOf(f.uri)),
    ...(params.workspaceFolders ? [] : [params.rootUri ? pathOf(params.rootUri) : null]),
  ].filter((p): p is string => p !== null);
  engineReady = initEngine().catch((e) => {
    connection.console.error(`GPU Pilot could not load its Python parser: ${e instanceof Error ? e.message : String(e)}`);
  });
  return {
    capabilities: {
      textDocumentSync: TextDocumentSyncKind.Incremental,
      // Every cell, markdown included (no `cells` filter): the client drops the cells a filter does
      // not match, and the engine's cell numbers ("cell 2, line 4") must be the ones VS Code shows
      // (the position among all cells, as the CLI counts them in the .ipynb). Non-Python cells are
      // markup to the engine (cellsOf).
      notebookDocumentSync: { notebookSelector: [{ notebook: { notebookType: "jupyter-notebook" } }] },
      codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix, `${CodeActionKind.SourceFixAll}.gpuPilot`, UNSAFE_FIXES_KIND], resolveProvider: true },
      hoverProvider: true,
      inlayHintProvider: true,
    },
    serverInfo: { name: "gpu-pilot", version: "0.1.0" },
  };
});

documents.onDidOpen((e) => schedule(e.document.uri));
documents.onDidChangeContent((e) => {
  schedule(e.document.uri);
  const path = pathOf(e.document.uri);
  if (path?.endsWith(".py")) projectFileChanged(path, e.document.uri);
});
documents.onDidClose((e) => {
  projectDeps.delete(e.document.uri);
  const path = pathOf(e.document.uri);
  if (path?.endsWith(".py")) projectFileChanged(path);
  fixes.delete(e.document.uri);
  kernelRestarts.delete(e.document.uri);
  noEffectLines.delete(e.document.uri);
  cellPublished.delete(e.document.uri);
  pending.delete(e.document.uri);
  trees.forget(e.document.uri);
  keptYaml.delete(e.document.uri);
  resolvedOptions.delete(e.document.uri);
  if (!notebooks.findNotebookDocumentForCell(e.document.uri)) settle(connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] }), "textDocument/publishDiagnostics");
});
notebooks.onDidOpen((nb) => schedule(nb.uri));
notebooks.onDidChange((e) => schedule(e.notebookDocument.uri));
notebooks.onDidClose((nb) => { projectDeps.delete(nb.uri); runningKernels.delete(nb.uri); trees.forget(nb.uri); noEffectLines.delete(nb.uri); for (const c of nb.cells) settle(connection.sendDiagnostics({ uri: c.document, diagnostics: [] }), "textDocument/publishDiagnostics"); });

connection.onNotification(InventoryNotification.type, (params: unknown) => {
  const checked = checkInventoryParams(params);
  if ("problem" in checked) {
    connection.console.warn(`GPU Pilot: ignored a ${InventoryNotification.method} notification: ${checked.problem}.`);
    return;
  }
  const before = inventory;
  inventory = checked.value;
  // The client sends the inventory whenever a GPU's free memory changes (every second of a training
  // run while the GPU view is visible): the findings depend only on the GPUs' count and UUIDs
  // (lintOptions `machine`, and whether the machine model is kept), so only a change of those lints
  // the open documents again; the inlay hints show each GPU's name, bus id and free GiB.
  if (inventoryLintKey(before) !== inventoryLintKey(inventory)) relintAll();
  else connection.tracer.log("inventory: the GPUs' count and UUIDs are unchanged, nothing linted again");
  if (settings.inlayHints && inventoryHintKey(before) !== inventoryHintKey(inventory)) settle(connection.languages.inlayHint.refresh(), "workspace/inlayHint/refresh");
});

// The notebook's running kernel (issue 42 item 2): its GPU001 findings and hovers follow what the
// kernel reports; a change of what the lint reads (the frameworks that initialised CUDA, the
// visible devices) lints that notebook again.
connection.onNotification(RUNNING_KERNEL_METHOD, (params: unknown) => {
  const checked = checkRunningKernelParams(params);
  if ("problem" in checked) {
    connection.console.warn(`GPU Pilot: ignored a ${RUNNING_KERNEL_METHOD} notification: ${checked.problem}.`);
    return;
  }
  const { notebook, kernel } = checked.value;
  const before = JSON.stringify(runningKernels.get(notebook) ?? null);
  if (kernel) runningKernels.set(notebook, kernel);
  else runningKernels.delete(notebook);
  if (JSON.stringify(kernel) === before) return;
  connection.tracer.log(`runningKernel ${notebook}: ${kernel ? `CUDA initialised by [${kernel.initialisedBy.join(", ")}], CUDA_VISIBLE_DEVICES=${kernel.cudaVisibleDevices ?? "unset"}` : "not known"}`);
  if (notebooks.getNotebookDocument(notebook)) schedule(notebook);
});

/** What of the inventory the lint reads (lintOptions `machine`): the GPUs' UUIDs in order, or null without nvidia-smi. */
function inventoryLintKey(inv: InventoryParams): string {
  return JSON.stringify(inv.gpus?.map((g) => g.uuid) ?? null);
}

/** What of the inventory the inlay hints show (machineHelp.ts: `→ GPU n`, machine.ts `describeOrdinal` as the tooltip): per GPU its index, UUID, name, bus id and `freeText`. */
function inventoryHintKey(inv: InventoryParams): string {
  return JSON.stringify(inv.gpus?.map((g) => [g.index, g.uuid, g.name, g.pciBusId, freeText(g)]) ?? null);
}

/**
 * A notebook cell's machine help: `f` gets the model of the notebook's joined code cells (the last
 * lint's while it is of the notebook's version, else a fresh analysis), the cell's place in the
 * joined text, the "cell K, line N" of a joined line and the notebook's GPU001 lines (joined).
 * Null for a URI that is no code cell of an open notebook.
 */
function withCellModel<T>(cellUri: string, f: (model: MachineModel, start: CellStart, where: (line: number) => string, noEffect: ReadonlySet<number> | undefined, kernel: RunningKernelFacts | undefined) => T): T | null {
  const nb = notebooks.findNotebookDocumentForCell(cellUri);
  if (!nb) return null;
  const { cells, uris } = cellsOf(nb);
  const place = cellInJoined(cells, uris.indexOf(cellUri), trees.treeOf(nb.uri, nb.version));
  if (!place) return null;
  const noEffect = noEffectLines.get(nb.uri)?.lines;
  const kernel = runningKernels.get(nb.uri);
  const kept = trees.modelOf(nb.uri, nb.version);
  if (kept) return f(kept, place.start, place.where, noEffect, kernel);
  if (fileTooLarge(place.joined, settings.maxFileSizeKB)) return null;
  const model = analyzePython(place.joined, lintOptions(nb.uri), place.magics);
  try { return f(model, place.start, place.where, noEffect, kernel); } finally { model.tree.delete(); }
}

/** A position in a cell moved to the joined text (`by`: the cell's first line there), or back (`-by`). */
const shifted = (p: { line: number; character: number }, by: number) => ({ line: p.line + by, character: p.character });
/** {@link shifted} for both ends of a range. */
const shiftedRange = (r: { start: { line: number; character: number }; end: { line: number; character: number } }, by: number) => ({ start: shifted(r.start, by), end: shifted(r.end, by) });

/**
 * Runs `f` on the model of a plain Python document (not notebook cells): the one kept with the
 * last lint while that lint is of the document's version, else a fresh analysis (its tree deleted after).
 */
function withModel<T>(uri: string, f: (model: MachineModel) => T): T | null {
  const doc = documents.get(uri);
  if (!doc || doc.languageId !== "python" || notebooks.findNotebookDocumentForCell(uri)) return null;
  // The last lint's model while it is of this version (hovers, inlay hints and the light bulb ask
  // at every cursor move and edit: a fresh analysis of a 5,000-line file took ~100 ms each).
  const kept = trees.modelOf(uri, doc.version);
  if (kept) return f(kept);
  if (fileTooLarge(doc.getText(), settings.maxFileSizeKB)) return null;
  const model = analyzePython(doc.getText(), lintOptions(uri));
  try { return f(model); } finally { model.tree.delete(); }
}
const lineWhere = (l: number) => `line ${l + 1}`;
connection.onNotification(SettingsNotification.type, (raw: unknown) => {
  const { value: params, problems } = checkEditorSettings(raw);
  for (const p of problems) connection.console.warn(`GPU Pilot: ${SettingsNotification.method}: ${p}; ignored.`);
  const hintsChanged = params.inlayHints !== undefined && params.inlayHints !== settings.inlayHints;
  settings = { ...settings, ...params };
  configProblemsShown.clear();
  resolvedOptions.clear();
  relintAll();
  if (hintsChanged) settle(connection.languages.inlayHint.refresh(), "workspace/inlayHint/refresh");
});
connection.onDidChangeWatchedFiles((params) => {
  // A Python module changed on disk: the documents that read it are linted again. One created or
  // deleted may change how imports resolve: everything is read again. Anything else is configuration.
  const python = params.changes.filter((c) => c.uri.endsWith(".py"));
  if (python.some((c) => c.type !== FileChangeType.Changed)) { projectIndex.clear(); relintAll(); }
  else for (const c of python) { const path = pathOf(c.uri); if (path) projectFileChanged(path); }
  if (python.length === params.changes.length) return;
  configProblemsShown.clear();
  resolvedOptions.clear();
  baselineFiles.clear();
  relintAll();
});

function editOf(uri: string, fix: Fix | CellFix): WorkspaceEdit {
  const changes: Record<string, LspTextEdit[]> = {};
  for (const e of fix.edits) {
    if ("uri" in e) (changes[e.uri] ??= []).push(e.edit);
    else (changes[uri] ??= []).push(e);
  }
  return { changes };
}

const wants = (only: string[] | undefined, kind: string) => !only || only.some((k) => kind === k || kind.startsWith(`${k}.`));

/**
 * `source.fixAll.gpuPilot`: every safe fix, as whole-document (or whole-cell) replacements; with
 * `unsafe`, {@link UNSAFE_FIXES_KIND}: every fix, the unsafe ones (which may change what the code
 * does) too. Null when there is nothing to apply.
 */
function fixAllAction(uri: string, unsafe = false): CodeAction | null {
  const a = fixAllEdit(uri, unsafe);
  if (!a) return null;
  return unsafe
    ? { title: "GPU Pilot: Apply all fixes, unsafe ones included", kind: UNSAFE_FIXES_KIND, edit: a }
    : { title: "GPU Pilot: Fix all auto-fixable problems", kind: `${CodeActionKind.SourceFixAll}.gpuPilot`, edit: a };
}

/** The edit of {@link fixAllAction}, or null when no fix applies. */
function fixAllEdit(uri: string, unsafe: boolean): WorkspaceEdit | null {
  const nb = notebooks.findNotebookDocumentForCell(uri);
  const full = (doc: TextDocument, text: string): LspTextEdit => ({ range: { start: { line: 0, character: 0 }, end: doc.positionAt(doc.getText().length) }, newText: text });
  if (nb) {
    const { cells, uris } = cellsOf(nb);
    const r = fixAllNotebook(cells, lintOptions(nb.uri), unsafe);
    if (!r.applied) return null;
    const changes: Record<string, LspTextEdit[]> = {};
    r.cells.forEach((c, i) => { const doc = documents.get(uris[i]); if (doc && c.text !== cells[i].text) changes[uris[i]] = [full(doc, c.text)]; });
    return { changes };
  }
  const doc = documents.get(uri);
  if (!doc) return null;
  const kind = manifestKindOfDoc(doc);
  const r = kind ? fixAllManifest(doc.getText(), kind, lintOptions(uri), unsafe) : fixAllPython(doc.getText(), lintOptions(uri), unsafe);
  if (!r.applied) return null;
  return { changes: { [uri]: [full(doc, r.text)] } };
}

/**
 * Whether a notebook cell's fix (edits of its notebook's cells) still adds no syntax error to the
 * notebook's code (notebook.ts `cellFixParsesCleanly`); false when its cells are no longer open.
 */
function cellFixValid(cellUri: string, fix: CellFix): boolean {
  const nb = notebooks.findNotebookDocumentForCell(cellUri);
  if (!nb) return false;
  const { cells, uris } = cellsOf(nb);
  const edits = fix.edits.map((e) => ({ cell: uris.indexOf(e.uri), range: e.edit.range, newText: e.edit.newText }));
  return edits.every((e) => e.cell >= 0) && cellFixParsesCleanly(cells, edits);
}

connection.onCodeAction(async (params) => {
  await engineReady;
  const uri = params.textDocument.uri;
  const only = params.context.only;
  const actions: CodeAction[] = [];
  // Unsafe fixes only when asked for by name (gpuPilot.applyUnsafeFixes), never for a broader kind.
  if (only?.includes(UNSAFE_FIXES_KIND)) {
    const a = fixAllAction(uri, true);
    return a ? [a] : [];
  }
  if (only && wants(only, `${CodeActionKind.SourceFixAll}.gpuPilot`)) {
    const a = fixAllAction(uri);
    return a ? [a] : [];
  }
  if (!wants(only, CodeActionKind.QuickFix)) return [];
  const known = fixes.get(uri);
  const doc = documents.get(uri);
  const kind = doc ? manifestKindOfDoc(doc) : null;
  for (const d of params.context.diagnostics) {
    if (d.source !== "gpu-pilot") continue;
    const code = String(d.code);
    const fix = known?.get(keyOf(code, d.range.start.line, d.range.start.character));
    const valid = fix && (!("edits" in fix) || fix.edits.length === 0 || ("uri" in fix.edits[0] ? cellFixValid(uri, fix as CellFix) : !doc || (kind ? manifestFixParsesCleanly(doc.getText(), kind, fix as Fix) : fixParsesCleanly(doc.getText(), fix as Fix, false, trees.treeOf(uri, doc.version)))));
    if (fix && valid) actions.push({ title: fix.title, kind: CodeActionKind.QuickFix, diagnostics: [d], isPreferred: fix.safe, edit: editOf(uri, fix) });
    if (doc) {
      const edit = kind ? manifestNoqaEdit(doc.getText(), kind, d.range.start.line, code) : noqaEdit(doc.getText(), d.range.start.line, code, trees.treeOf(uri, doc.version));
      if (edit) actions.push({ title: `Disable ${code} for this ${kind === "dockerfile" ? "instruction" : "line"}`, kind: CodeActionKind.QuickFix, diagnostics: [d], edit: { changes: { [uri]: [edit] } } });
    }
    const restart = kernelRestarts.get(uri)?.get(keyOf(code, d.range.start.line, d.range.start.character));
    if (restart) {
      const title = restart.restart.devices ? `Restart kernel on GPU ${restart.restart.devices.join(",")}` : "Restart kernel on the selected GPUs";
      actions.push({ title, kind: CodeActionKind.QuickFix, diagnostics: [d], isPreferred: !fix, command: { title, command: RESTART_KERNEL_COMMAND, arguments: [restart.notebook, restart.restart.devices] } });
    }
    actions.push({ title: `Show documentation for ${code}`, kind: CodeActionKind.QuickFix, diagnostics: [d], command: { title: `Show documentation for ${code}`, command: SHOW_RULE_DOC_COMMAND, arguments: [code] } });
  }
  const useSel = inventory.selection.length ? withModel(uri, (m) => useSelectionEdit(m, params.range.start, inventory.selection))
    ?? withCellModel(uri, (m, start) => {
      const e = useSelectionEdit(m, shifted(params.range.start, start.line), inventory.selection);
      return e && { ...e, range: shiftedRange(e.range, -start.line) };
    }) : null;
  if (useSel) actions.push({ title: useSel.title, kind: CodeActionKind.QuickFix, edit: { changes: { [uri]: [{ range: useSel.range, newText: useSel.newText }] } } });
  if ((!params.context.diagnostics.some((d) => d.source === "gpu-pilot") || !only) && actions.length) {
    // The light bulb asks on every cursor move: a whole fix-all here cost 8 s on a 10 KB file with
    // 332 findings. A client that resolves edits gets the action without its edit,
    // offered when the last lint found a safe fix, and the edit is computed only when it is chosen.
    const title = "Fix all auto-fixable GPU Pilot problems";
    if (clientResolvesEdits) {
      const anySafe = [...(fixes.get(uri)?.values() ?? [])].some((f) => f.safe);
      if (anySafe) actions.push({ title, kind: CodeActionKind.QuickFix, data: { gpuPilotFixAll: uri } });
    } else {
      const all = fixAllAction(uri);
      if (all) actions.push({ ...all, kind: CodeActionKind.QuickFix, title });
    }
  }
  return actions;
});

connection.onCodeActionResolve(async (action) => {
  const uri = (action.data as { gpuPilotFixAll?: unknown } | undefined)?.gpuPilotFixAll;
  if (typeof uri !== "string") return action;
  await engineReady;
  const all = fixAllAction(uri);
  return { ...action, edit: all?.edit ?? { changes: {} } };
});

/** sinfo answers for the partition hover of job scripts (one per partition list, at most every 30 s). */
const partitionGpus = new PartitionGpuCache();

connection.onHover(async (params): Promise<Hover | null> => {
  await engineReady;
  const doc = documents.get(params.textDocument.uri);
  if (!doc) return null;
  const kind = manifestKindOfDoc(doc);
  const hit = kind ? manifestNoqaCodeAt(doc.getText(), kind, params.position) : noqaCodeAt(doc.getText(), params.position, trees.treeOf(params.textDocument.uri, doc.version));
  const rule = hit ? ruleByCode(hit.code) : undefined;
  if (hit && rule) return { contents: { kind: MarkupKind.Markdown, value: ruleMarkdown(rule.meta, docUrl(rule.meta.code)) }, range: hit.range };
  if (kind === "jobscript") {
    // `#SBATCH --partition=<name>`: the partition's GPUs from sinfo (cached 30 s; calm when sinfo is absent).
    const part = await partitionHover(doc.getText(), params.position, partitionGpus);
    return part ? { contents: { kind: MarkupKind.Markdown, value: part.markdown }, range: part.range } : null;
  }
  // Without GPUs there is no machine hover (machineHelp.ts fileVisibleMap): no model is needed.
  if (!inventory.gpus?.length) return null;
  const help = withModel(params.textDocument.uri, (m) => machineHover(m, params.position, inventory, lineWhere, noEffectLines.get(params.textDocument.uri)?.lines))
    ?? withCellModel(params.textDocument.uri, (m, start, where, noEffect, kernel) => {
      const h = machineHover(m, shifted(params.position, start.line), inventory, where, noEffect, true, kernel);
      return h && { markdown: h.markdown, range: shiftedRange(h.range, -start.line) };
    });
  return help ? { contents: { kind: MarkupKind.Markdown, value: help.markdown }, range: help.range } : null;
});

connection.languages.inlayHint.on(async (params): Promise<InlayHint[]> => {
  await engineReady;
  if (!settings.inlayHints || !inventory.gpus?.length) return [];
  const hints = withModel(params.textDocument.uri, (m) => machineInlayHints(m, params.range, inventory, lineWhere, noEffectLines.get(params.textDocument.uri)?.lines))
    ?? withCellModel(params.textDocument.uri, (m, start, where, noEffect, kernel) => {
      // The asked range, within the cell, in the joined text; the hints back in the cell.
      const last = start.line + start.lines - 1;
      const range = shiftedRange(params.range, start.line);
      if (range.end.line > last) range.end = { line: last, character: Number.MAX_SAFE_INTEGER };
      return machineInlayHints(m, range, inventory, where, noEffect, true, kernel)
        .filter((h) => h.position.line >= start.line && h.position.line <= last)
        .map((h) => ({ ...h, position: shifted(h.position, -start.line) }));
    });
  return hints?.map((h) => ({ position: h.position, label: ` ${h.label}`, tooltip: h.tooltip, paddingLeft: true })) ?? [];
});

// The agent tool gpu-pilot_checkFile (client/src/agents): one file's findings now, from the open
// editor's text (unsaved edits included) when the file is open, else from disk.
connection.onRequest(CheckFileRequest.type, async (params: unknown): Promise<CheckFileResult> => {
  const path = (params as { path?: unknown } | null)?.path;
  if (typeof path !== "string" || path === "") return { ok: false, path: String(path ?? ""), error: "params.path must be a non-empty string (an absolute file path)" };
  await engineReady;
  let uri: string;
  try { uri = pathToFileURL(path).href; } catch (e) { return { ok: false, path, error: (e as Error).message }; }
  const nb = notebooks.getNotebookDocument(uri);
  if (nb) return { ok: true, path, source: "editor", findings: checkCells(cellsOf(nb).cells, lintOptions(nb.uri)) };
  const doc = documents.get(uri);
  if (doc) return { ok: true, path, source: "editor", findings: checkText(path, doc.getText(), lintOptions(uri), doc.languageId) };
  return checkFileOnDisk(path, (file) => lintOptions(pathToFileURL(file).href));
});

// The checks before a run (client/src/run/checks.ts): what the script does, from the engine.
connection.onRequest(RunFactsRequest.type, async (params: unknown): Promise<RunFactsResult> => {
  const p = params as { uri?: unknown; text?: unknown } | null;
  if (typeof p?.uri !== "string" || typeof p.text !== "string") return { ok: false, error: "params must be { uri: string, text: string }" };
  await engineReady;
  const options = lintOptions(p.uri);
  const tooLarge = fileTooLarge(p.text, options.maxFileSizeKB);
  if (tooLarge) return { ok: false, error: tooLarge.message };
  try {
    return { ok: true, facts: runFacts(p.text, options) };
  } catch (e) {
    connection.console.error(`gpuPilot/runFacts on ${p.uri} failed: ${e instanceof Error ? e.stack : String(e)}`);
    return { ok: false, error: `the engine could not analyse it: ${e instanceof Error ? e.message : String(e)}` };
  }
});

connection.listen();
// Edits pass through DocumentTrees first (to edit the kept syntax tree), then to TextDocuments.
documents.listen(trees.intercept(connection, (uri) => documents.get(uri)));
notebooks.listen(connection);
observeArrivals()?.listen((message) => backlog.arrived(message));
