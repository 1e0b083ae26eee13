/**
 * What the language server's handlers share: the connection, the {@link Session} (the documents and
 * each one's state), the queue of changes not yet dispatched, the engine's readiness, and the
 * server-wide services on top of them: a document's lint options, the project index, the
 * baseline files, a notebook's cells as engine input.
 */
import { type Connection, type NotebookDocument } from "vscode-languageserver/node";
import type { TextDocument } from "vscode-languageserver-textdocument";
import { fileURLToPath } from "node:url";
import type { LintOptions } from "../engine/lint";
import { resolveLintOptions, type ResolvedOptions } from "../engine/options";
import { diskReader, lookupOptions, ProjectIndex, type FileLookup } from "../engine/python/project";
import type { ConfigProblem } from "../engine/config";
import type { CellInput } from "../engine/notebook";
import { manifestKindOf, type ManifestKind } from "../engine/manifests/lintManifest";
import { baselinedIn, BaselineFiles, type EditorFinding } from "../editorBaseline";
import { escapeControls } from "../../../common/src/text/controls";
import type { ChangeBacklog } from "../scheduling";
import type { Session } from "../session";

/** The path of a file URI, or null (untitled buffers, notebook cells of unsaved notebooks, other schemes). */
export function pathOf(uri: string): string | null {
  try {
    return uri.startsWith("file:") ? fileURLToPath(uri) : null;
  } catch {
    return null;
  }
}

/** The connection, the session and the services every handler uses. */
export class ServerContext {
  /** Resolves once the Python parser is loaded (`initialize` starts it); every lint and request waits for it. */
  engineReady: Promise<void> = Promise.resolve();
  /** The configuration problems already warned about (per file and content; {@link showConfigProblems}). */
  readonly configProblemsShown = new Set<string>();
  /**
   * The project's own modules as the open files import them (python/project.ts): an open document's
   * text (saved or not) first, then the file on disk through the safe reader.
   */
  readonly projectIndex: ProjectIndex;
  /** Baseline files named by open documents' pyproject.toml (editorBaseline.ts); problems logged once. */
  readonly baselineFiles: BaselineFiles;

  /**
   * @param backlog the changes read from the transport but not yet dispatched, per document
   *   (scheduling.ts): a lint of a document with one is stale.
   */
  constructor(
    readonly connection: Connection,
    readonly session: Session,
    readonly backlog: ChangeBacklog,
  ) {
    this.projectIndex = new ProjectIndex((file) => this.openText(file) ?? diskReader(file));
    this.baselineFiles = new BaselineFiles((m) => connection.console.warn(escapeControls(m)));
  }

  /**
   * The text of the open text document whose file is `path` (absolute and normalised, as
   * {@link pathOf} gives it), saved or not; null when none is open there (notebook cells have no
   * file of their own). What the project index and the launch rules (LintOptions.openText) read
   * before the disk.
   */
  readonly openText = (path: string): string | null => {
    for (const d of this.session.documents.all()) if (pathOf(d.uri) === path) return d.getText();
    return null;
  };

  /**
   * Handles a promise the connection returned (a request to the client, or a notification written to
   * the transport): a rejection is logged, never left unhandled. Node ends a process on an unhandled
   * rejection, and a minimal client answers `window/showMessageRequest` with MethodNotFound (the
   * server died on a pyproject.toml with one bad key). `what` names the message in the log.
   * `p` is taken as `unknown`: `window.showWarningMessage(message)` is typed `void` without actions,
   * yet sends `window/showMessageRequest` and returns its promise.
   */
  settle(p: unknown, what: string): void {
    if (typeof (p as Promise<unknown> | undefined)?.catch !== "function") return;
    (p as Promise<unknown>).catch((e: unknown) => {
      try {
        this.connection.console.log(`GPU Pilot: ${what} failed: ${e instanceof Error ? e.message : String(e)}`);
      } catch {
        /* the connection is gone */
      }
    });
  }

  /**
   * Options for a document: editor settings + nearest pyproject + torch pin; config problems shown
   * once. An open text document's resolved options are kept in its OpenDocument (`options`, until
   * a setting or a watched file changes); other URIs (notebooks, runFacts texts, notebook cells)
   * are resolved each time. With `openText`: the launch rules read the scripts a shell script or a
   * notebook's shell line starts from the open documents first, as the project index reads modules.
   */
  lintOptions(uri: string): LintOptions {
    const { session } = this;
    let resolved = session.get(uri)?.options;
    if (!resolved) {
      resolved = this.resolveOptionsOf(uri);
      // Open text documents only (their close forgets it); a cell's state is its notebook's.
      if (session.documents.get(uri) && !session.notebooks.findNotebookDocumentForCell(uri))
        session.ensure(uri).options = resolved;
    }
    // The live inventory (nvidia-smi on this machine) wins; without one, the pyproject's `[tool.gpu-pilot] gpus`/`inventory`.
    const { inventory, settings } = session;
    const live = inventory.gpus ? { gpuCount: inventory.gpus.length, uuids: inventory.gpus.map((g) => g.uuid) } : null;
    return {
      ...resolved.options,
      ...(resolved.excluded ? { excluded: resolved.excluded } : {}),
      maxFileSizeKB: settings.maxFileSizeKB,
      machine: live ?? resolved.options.machine ?? { gpuCount: null, uuids: [] },
      openText: this.openText,
    };
  }

  /** resolveLintOptions for a document's file, its problems shown once each (log and a warning). */
  resolveOptionsOf(uri: string): ResolvedOptions {
    const { settings } = this.session;
    const resolved = resolveLintOptions(
      pathOf(uri),
      {
        select: settings.select,
        ignore: settings.ignore,
        severity: settings.severity,
        eagerInitModules: settings.eagerInitModules,
        ...(typeof settings.preview === "boolean" ? { preview: settings.preview } : {}),
        ...(typeof settings.targetTorch === "string" ? { targetTorch: settings.targetTorch } : {}),
      },
      settings.configurationPreference ?? "editorFirst",
      {},
      this.session.workspaceRoots,
    );
    this.showConfigProblems(resolved.problems);
    return resolved;
  }

  /**
   * Logs each configuration problem (at most 21 a file: config.ts lists 20, then counts the rest)
   * and shows ONE warning per file and content, naming the first problem and how many there are
   * (a pyproject.toml with 30,000 bad keys opened 30,000 pop-ups). A file is warned
   * about again only when its problems change (a watched-file change clears the memory).
   */
  showConfigProblems(problems: readonly ConfigProblem[]): void {
    const { connection } = this;
    const byFile = new Map<string, ConfigProblem[]>();
    for (const p of problems) byFile.set(p.file, [...(byFile.get(p.file) ?? []), p]);
    for (const [path, list] of byFile) {
      const key = JSON.stringify(list.map((p) => [p.file, p.line ?? null, p.message]));
      if (this.configProblemsShown.has(key)) continue;
      this.configProblemsShown.add(key);
      const file = escapeControls(path);
      for (const p of list)
        connection.console.warn(`${file}${p.line ? `:${p.line}` : ""}: ${escapeControls(p.message)}`);
      const first = list[0];
      const more =
        list.length > 1
          ? ` (and more: ${list.length === 2 ? "1 other problem" : "other problems"} in the GPU Pilot output)`
          : "";
      this.settle(
        connection.window.showWarningMessage(
          `GPU Pilot: ${file}${first.line ? `, line ${first.line}` : ""}: ${escapeControls(first.message)}${more}. Linting goes on without ${list.length > 1 ? "them" : "it"}.`,
        ),
        "window/showMessageRequest",
      );
    }
  }

  /** The project lookup for a Python document or notebook with a file path (none for an untitled one). */
  projectLookup(uri: string, options: LintOptions): FileLookup | undefined {
    const path = pathOf(uri);
    return path ? this.projectIndex.lookupFor(path, lookupOptions(options)) : undefined;
  }

  /**
   * Which of a document's findings its pyproject's baseline holds (all false without one).
   * @param texts the document's text, or each notebook cell's.
   */
  baselinedOf(uri: string, findings: readonly EditorFinding[], texts: readonly string[]): boolean[] {
    const path = findings.length ? pathOf(uri) : null;
    const named = path ? (this.session.get(uri)?.options ?? this.resolveOptionsOf(uri)).baseline : null;
    const baseline = named ? this.baselineFiles.get(named) : null;
    return baseline ? baselinedIn(baseline, path!, findings, texts) : findings.map(() => false);
  }

  /** The cells of a notebook as engine input (with each cell's execution order, when the client sent one), with their URIs. */
  cellsOf(nb: NotebookDocument): { cells: CellInput[]; uris: string[] } {
    const cells: CellInput[] = [];
    const uris: string[] = [];
    for (const cell of nb.cells) {
      const doc = this.session.documents.get(cell.document);
      uris.push(cell.document);
      // The kernel's `In [n]` of the cell's last run (LSP 3.17 NotebookCell.executionSummary): GPU050.
      const order = cell.executionSummary?.executionOrder;
      cells.push({
        kind: cell.kind === 2 && (!doc || doc.languageId === "python") ? "code" : "markup",
        text: doc?.getText() ?? "",
        ...(Number.isSafeInteger(order) && order! > 0 ? { executionCount: order } : {}),
      });
    }
    return { cells, uris };
  }
}

/** The manifest kind of a document (Dockerfile, compose file, other YAML), or null for Python. */
export function manifestKindOfDoc(doc: TextDocument): ManifestKind | null {
  return manifestKindOf(pathOf(doc.uri) ?? doc.uri, doc.languageId);
}
