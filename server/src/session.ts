/**
 * The language server's state (issue 44 step 4): the documents the client keeps in sync, what the
 * client told the server (settings, GPU inventory, workspace folders), and **one
 * {@link OpenDocument} per document URI** holding everything the server keeps about that document
 * between a lint and the requests after it: the engine's analysis of it (its kept parse and what the
 * next lint continues from), the fixes and GPU001 lines of its last lint, its resolved options, the
 * project files it read, a notebook's running kernel and its cells' state. {@link Session.close}
 * drops all of it at once (and disposes of the analysis, freeing its trees), so a closed document
 * leaves nothing behind and a reopened one starts clean.
 *
 * Text and version: a document's text, version and language are those of its synced
 * `TextDocument` ({@link Session.documents}: vscode-languageserver's TextDocuments, which updates it
 * in place at every change) and a notebook's cell list and version its `NotebookDocument`'s
 * ({@link Session.notebooks}); they are not copied here. What is kept here records the version it
 * is of where that matters (`noEffect.version`, the analysis's version).
 *
 * Notebook cells are not OpenDocuments of their own: the notebook owns its cells' state
 * ({@link OpenDocument.cells}). A notebook is linted as one program (its code cells joined: the
 * timeline crosses cells, a fix may edit several cells), so the lint's per-cell results (fixes,
 * kernel-restart offers, diagnostics published) are made together, replaced together at each commit
 * and dropped with the notebook; the notebook's analysis, model, GPU001 lines (in joined lines), running
 * kernel and project files are the notebook's. A cell removed from its notebook (its own close)
 * drops that cell's state ({@link Session.close} with the cell's URI).
 *
 * Entries are made on first use ({@link Session.ensure}), not at `didOpen`: a cell's `didOpen`
 * comes before the server knows which notebook it belongs to (NotebookDocuments maps the cells
 * after opening them), and a notebook's running-kernel facts may come before its `didOpen` (a
 * restarted server gets every known kernel at once). Everything that makes one runs while the
 * document is open (a lint, a committed lint, options of an open text document), except the
 * running-kernel facts, which the notebook's close drops.
 *
 * Engine side tables (the project index, the baseline files, the partition cache) stay the
 * server's: they are shared by documents, not owned by one.
 */
import {
  TextDocuments,
  NotebookDocuments,
  type Connection,
  type TextEdit as LspTextEdit,
} from "vscode-languageserver/node";
import { TextDocument } from "vscode-languageserver-textdocument";
import { DocumentTrees, KEPT_TREES, type KeptAnalysis, type KeptTrees } from "./incremental";
import type { Fix, KernelRestart } from "./engine/types";
import type { ResolvedOptions } from "./engine/options";
import type { YamlParse } from "./engine/manifests/yaml";
import type { EditorLintSettings, InventoryParams } from "../../common/src/lsp/protocol";
import type { RunningKernelFacts } from "../../common/src/kernel/runningKernel";

/**
 * A notebook cell's fix: the engine's fix with its edits mapped from the joined text to the cells
 * they edit (`{ uri: cellUri, edit: { range, newText } }`, ranges in the cell).
 */
export interface CellFix {
  title: string;
  safe: boolean;
  note?: string;
  edits: Array<{ uri: string; edit: LspTextEdit }>;
}

/**
 * The "Restart kernel on GPU n" a GPU001 finding of a running kernel offers (issue 42): the
 * notebook's URI (the command's first argument) and the engine's `{ variable, devices }`.
 */
export interface RestartOffer {
  notebook: string;
  restart: KernelRestart;
}

/**
 * What a notebook's last committed lint left for one of its cells. Fixes and offers are keyed as
 * {@link OpenDocument.fixes} (`code@line:character`, the finding's start in the cell).
 */
export class CellState {
  /** The fixes of the cell's findings. */
  fixes: ReadonlyMap<string, CellFix> = new Map();
  /** The kernel restarts the cell's GPU001 findings of a running kernel offer. */
  restarts: ReadonlyMap<string, RestartOffer> = new Map();
  /**
   * The diagnostics last published for the cell, as JSON (`JSON.stringify(Diagnostic[])`); a
   * notebook lint publishes only the cells whose diagnostics changed. Undefined: none published yet.
   */
  published: string | undefined = undefined;
}

/** The GPU001 lines (0-based) of a lint, and the document version that lint was of. */
export interface NoEffectLines {
  version: number;
  lines: ReadonlySet<number>;
}

/**
 * What the server keeps about one open text document (Python, a manifest) or notebook, by URI.
 * Fields a kind does not use stay undefined (a text document has no cells; a notebook no YAML).
 * A URI synced both as a text document and as a notebook (which the client's document selector
 * does not do for `.ipynb` files) would share one entry, as it shared the keys of the maps this
 * replaced, and either's close would drop it.
 */
export class OpenDocument {
  /**
   * The engine's analysis of a Python document, or of a notebook's joined code cells, from its last
   * lint (incremental.ts {@link KeptAnalysis}: `{ analysis, text, version, model?, unedited }`;
   * engine/analysis.ts `DocumentAnalysis`: the kept parse, the statements' facts, the nesting scan,
   * the prefilter's probe, a notebook's joined cells). At most KEPT_TREES documents hold one, and
   * their texts KEPT_SOURCE_CHARS characters together (incremental.ts); the
   * least recently linted lose theirs. Managed by {@link Session.trees}: taken by the next lint,
   * its trees edited by each `didChange`, disposed of (`analysis.dispose()`: its trees freed) when
   * dropped.
   */
  analysis: KeptAnalysis | undefined = undefined;
  /**
   * A YAML manifest's parse from its last lint (manifests/yaml.ts `{ text, documents }`): the next
   * version's lint parses again only the YAML documents an edit touches. Taken by that lint
   * ({@link takeYaml}: the documents are reused).
   */
  yaml: YamlParse | undefined = undefined;
  /**
   * A text document's quick fixes from its last committed lint, keyed `code@line:character`
   * (the finding's start; `keyOf` in handlers/diagnostics.ts). A notebook's are its cells'.
   */
  fixes: ReadonlyMap<string, Fix> | undefined = undefined;
  /**
   * The 0-based lines of the last committed lint's GPU001 findings (environment writes with no
   * effect because CUDA was already initialised; a notebook's in its joined code): the machine
   * hovers and inlay hints take the engine's verdict from here instead of treating every write as
   * effective.
   */
  noEffect: NoEffectLines | undefined = undefined;
  /**
   * The resolved options of a text document (its pyproject.toml, torch pin, job scripts and
   * settings: engine/options.ts `{ options, problems, baseline }`), kept until a setting or a
   * watched file changes ({@link Session.forgetOptions}): resolving them looks up files on the way
   * to the workspace root, ~0.3 ms a keystroke. A notebook's are resolved each time.
   */
  options: ResolvedOptions | undefined = undefined;
  /**
   * The project files (absolute paths) the last lint read through the server's ProjectIndex: an
   * edit or a watched change of one lints this document again.
   */
  projectDeps: ReadonlySet<string> | undefined = undefined;
  /**
   * The other workspace files (absolute paths) the last lint's launch rules read, of a shell script
   * or a notebook's shell lines (lintManifest's and lintNotebook's `deps`: the Python script a
   * `python x.py` line starts, the modules it hands its namespace to, a sourced file, an accelerate
   * config): an edit, a close or a watched change of one lints this document again. Kept apart from
   * {@link projectDeps}, which counts only while the project index had kept the file.
   */
  launchDeps: ReadonlySet<string> | undefined = undefined;
  /**
   * A notebook's running kernel as the client's probe last saw it (gpuPilot/runningKernel, issue
   * 42 item 2; common/src/kernel/runningKernel.ts `{ initialisedBy, cudaVisibleDevices, ... }`).
   * Undefined: not known (no kernel access, no kernel, the probe timed out): the lint is the static one.
   */
  kernel: RunningKernelFacts | undefined = undefined;
  /** A notebook's cells' state, by cell URI (see the module comment: the notebook owns it). */
  readonly cells = new Map<string, CellState>();

  constructor(readonly uri: string) {}

  /** The kept YAML parse, no longer kept (the caller's lint reuses its documents). */
  takeYaml(): YamlParse | undefined {
    const y = this.yaml;
    this.yaml = undefined;
    return y;
  }

  /**
   * Empties the entry (its analysis must be disposed of first: {@link Session.close} does both), so
   * that a reference still held somewhere keeps nothing of a closed document alive.
   */
  clear(): void {
    this.analysis = undefined;
    this.yaml = undefined;
    this.fixes = undefined;
    this.noEffect = undefined;
    this.options = undefined;
    this.projectDeps = undefined;
    this.launchDeps = undefined;
    this.kernel = undefined;
    this.cells.clear();
  }

  /** The state of cell `cellUri`, made empty on first use. */
  cell(cellUri: string): CellState {
    let c = this.cells.get(cellUri);
    if (!c) this.cells.set(cellUri, (c = new CellState()));
    return c;
  }
}

/** The state of one language server connection: what is open, and what the client told. */
export class Session {
  /** The synced text documents, notebook cells included (text, version, language; updated in place). */
  readonly documents = new TextDocuments(TextDocument);
  /** The synced notebooks (their cells and version), over {@link documents} for the cells' text. */
  readonly notebooks = new NotebookDocuments(this.documents);
  /** The lint settings (`initializationOptions`, then gpuPilot/settings). */
  settings: Partial<EditorLintSettings> = {};
  /** The GPU inventory and selection (gpuPilot/inventory). */
  inventory: InventoryParams = { gpus: null, selection: [] };
  /** The workspace folders (from `initialize`): the pyproject.toml lookup does not go above them. */
  workspaceRoots: string[] = [];
  /** Whether the client resolves a code action's edit on demand (codeAction/resolve with "edit"). */
  clientResolvesEdits = false;
  /**
   * The kept analyses (with their syntax trees), each in its document's {@link OpenDocument.analysis},
   * at most `limit` in all (the least recently kept disposed of first).
   */
  readonly trees: DocumentTrees;

  private readonly open = new Map<string, OpenDocument>();
  /** The URIs whose entry holds an analysis, the least recently kept first (DocumentTrees' order). */
  private readonly treeOrder = new Set<string>();

  /** @param treeLimit how many documents keep their analysis and its syntax trees (incremental.ts KEPT_TREES). */
  constructor(treeLimit = KEPT_TREES) {
    const order = this.treeOrder;
    const slots: KeptTrees = {
      get: (uri) => this.open.get(uri)?.analysis,
      set: (uri, kept) => {
        this.ensure(uri).analysis = kept;
        this.treeOrder.delete(uri);
        this.treeOrder.add(uri);
      },
      delete: (uri) => {
        const d = this.open.get(uri);
        if (d) d.analysis = undefined;
        this.treeOrder.delete(uri);
      },
      keys: () => this.treeOrder.keys(),
      get size() {
        return order.size;
      },
    };
    this.trees = new DocumentTrees(treeLimit, slots);
  }

  /**
   * Syncs {@link documents} and {@link notebooks} over `connection`: each text change reaches the
   * kept analysis's trees first (incremental.ts `intercept`), then TextDocuments.
   */
  listen(connection: Connection): void {
    this.documents.listen(this.trees.intercept(connection, (uri) => this.documents.get(uri)));
    this.notebooks.listen(connection);
  }

  /** The state of the text document or notebook `uri`, if any is kept (none for a cell's URI). */
  get(uri: string): OpenDocument | undefined {
    return this.open.get(uri);
  }

  /** The state of `uri` (a text document or notebook, never a cell), made empty on first use. */
  ensure(uri: string): OpenDocument {
    let d = this.open.get(uri);
    if (!d) this.open.set(uri, (d = new OpenDocument(uri)));
    return d;
  }

  /** The state a notebook keeps for its cell `cellUri`, if any. */
  cellOf(cellUri: string): CellState | undefined {
    for (const d of this.open.values()) {
      const c = d.cells.get(cellUri);
      if (c) return c;
    }
    return undefined;
  }

  /** Every kept document state (for the documents that read a changed project file). */
  all(): IterableIterator<OpenDocument> {
    return this.open.values();
  }

  /** How many documents have state kept (a closed document has none: for tests and leak checks). */
  get size(): number {
    return this.open.size;
  }

  /** Forgets every document's resolved options (a setting or a configuration file changed). */
  forgetOptions(): void {
    for (const d of this.open.values()) d.options = undefined;
  }

  /**
   * The document (text document or notebook) `uri` closed: drops its whole state and disposes of
   * its kept analysis (freeing its trees). A notebook cell's URI (the cell left its notebook, or the notebook closed) drops
   * that cell's state in its notebook.
   */
  close(uri: string): void {
    const d = this.open.get(uri);
    if (d) {
      this.trees.forget(uri);
      this.open.delete(uri);
      d.clear();
      return;
    }
    for (const d of this.open.values()) if (d.cells.delete(uri)) return;
  }
}
