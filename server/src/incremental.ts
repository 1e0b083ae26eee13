/**
 * Incremental analysis for the language server: keeps each open Python document's (or notebook's)
 * last analysis (engine/analysis.ts `DocumentAnalysis`: its syntax trees, python/moduleTrees.ts, one
 * per chunk of top-level statements, and what the next lint continues from) and applies every
 * content change of `textDocument/didChange` to its trees (`ModuleTrees.edit`), so the next lint
 * parses only the chunks the changes touched and analyses only the statements in them. Positions
 * are LSP's: 0-based lines, UTF-16 columns, which is also what web-tree-sitter's edit takes for JS
 * strings.
 */
import type { Connection, DidChangeTextDocumentParams, NotificationHandler } from "vscode-languageserver/node";
import type { ModuleTrees } from "./engine/python/moduleTrees";
import type { DocumentAnalysis } from "./engine/analysis";
import type { MachineModel } from "./engine/machineHelp";
import { lineStarts, offsetAt, pointAfterInsert } from "./engine/fixes";

/**
 * A kept analysis, the text its trees are of (null when not built: a single change mapped through
 * the document, see {@link DocumentTrees.applyChanges}), and that text's document version (LSP: it
 * grows with every change; -1 when unknown).
 */
export interface KeptAnalysis {
  analysis: DocumentAnalysis;
  text: string | null;
  version: number;
  /** What the machine hovers read of the lint's model of the trees; dropped by a change. */
  model?: MachineModel;
  /** No change was applied to the trees since they were kept: their nodes are those of `text`'s parse. */
  unedited: boolean;
  /** The length of the text the trees were parsed from (UTF-16 code units), what {@link KEPT_SOURCE_CHARS} counts. */
  chars?: number;
}

/** What applyChanges reads of the document as it was before the change (vscode-languageserver-textdocument's TextDocument). */
export interface DocumentBefore {
  readonly version: number;
  getText(): string;
  offsetAt(p: { line: number; character: number }): number;
  positionAt(offset: number): { line: number; character: number };
}

/**
 * How many documents keep their analysis (its trees) at most. What bounds them in practice is
 * {@link KEPT_SOURCE_CHARS}: a tree costs about 8.3 MiB of the parser's WebAssembly memory for a
 * 5,000-line file (200 KB of text, 89,000 nodes; measured in bench/), about 42 bytes per character
 * of source, and WebAssembly memory never shrinks: with a tree per open document, 20 such files
 * held 166 MiB in trees alone. The documents linted last keep theirs; another document's next edit
 * is a full lint (about 130 ms of CPU instead of 6 ms on that file, BENCHMARKS.md), and then it is
 * kept again.
 */
export const KEPT_TREES = 64;

/**
 * The source characters whose trees are kept, all documents together: 4,400,000 characters, about
 * 176 MiB of trees at the measured 42 bytes a character, so that twenty open 5,000-line files
 * (about 200,000 characters each) all keep theirs and an edit in any of them is incremental (issue
 * 41's goal 2: the edit's p95 fell from 241.7 to 8.1 ms, within Ruff's; the server's RSS after that
 * workload rose from 351 to 536 MiB: BENCHMARKS.md, "Kept trees for twenty open files"). Up to
 * {@link KEPT_TREES} open files of 1,000 lines all keep theirs. The document linted last keeps its
 * tree whatever its size (a single larger file is edited incrementally). Closing a document frees
 * its trees, but the parser's WebAssembly memory, once grown, is not given back to the system.
 */
export const KEPT_SOURCE_CHARS = 4_400_000;

/**
 * fixes.ts `offsetAt(lineStarts(text), text, p)` without building the line table (a 5,000-line
 * document's is 40 KB, built again for every keystroke): the engine's search for each `\n` up to
 * line `p.line`. A text with a `\r` takes the table.
 */
export function offsetOf(text: string, p: { line: number; character: number }): number {
  if (text.includes("\r")) return offsetAt(lineStarts(text), text, p);
  let at = 0;
  for (let l = 0; l < p.line; l++) {
    const nl = text.indexOf("\n", at);
    if (nl < 0) return text.length;
    at = nl + 1;
  }
  const nl = text.indexOf("\n", at);
  return Math.min(at + p.character, nl < 0 ? text.length : nl + 1);
}

/**
 * Where {@link DocumentTrees} puts the analyses it keeps: by document URI, `keys()` in the order they
 * were kept (the least recent first; `set` comes only after `delete` of the same URI, so a Map's
 * insertion order is that order). Deleting the URI being visited must not end a `keys()` walk.
 * A `Map<string, KeptAnalysis>` is one (the default); the language server's Session keeps each
 * analysis in its document's OpenDocument (session.ts).
 */
export interface KeptTrees {
  get(uri: string): KeptAnalysis | undefined;
  set(uri: string, kept: KeptAnalysis): void;
  delete(uri: string): void;
  keys(): Iterable<string>;
  readonly size: number;
}

/**
 * The analyses (with their trees), by document URI, the most recently kept last; at most `limit`
 * of them. An analysis that is dropped is disposed of (its trees freed).
 */
export class DocumentTrees {
  /**
   * @param limit how many analyses are kept at most (the least recently kept are freed first).
   * @param kept where they are kept (a Map of its own unless given).
   * @param chars how many characters of source the kept analyses' trees may be parses of, all
   *   together (the least recently kept are freed first; the most recent is kept whatever its size).
   */
  constructor(
    private readonly limit = KEPT_TREES,
    private readonly kept: KeptTrees = new Map<string, KeptAnalysis>(),
    private readonly chars = KEPT_SOURCE_CHARS,
  ) {}

  /** How many analyses are kept now. */
  get size(): number {
    return this.kept.size;
  }

  /** The characters of source the kept trees are parses of, all together. */
  get keptChars(): number {
    let n = 0;
    for (const uri of this.kept.keys()) n += this.kept.get(uri)?.chars ?? 0;
    return n;
  }

  /**
   * Frees the least recently kept analyses until at most `count` remain and their texts with
   * `more` characters fit {@link KEPT_SOURCE_CHARS}; `spare` (the analysis just kept) is never freed.
   */
  private shrink(count: number, more: number, spare?: string): void {
    let chars = this.keptChars + more;
    for (const old of [...this.kept.keys()]) {
      if (this.kept.size <= count && chars <= this.chars) break;
      if (old === spare) continue;
      chars -= this.kept.get(old)?.chars ?? 0;
      this.forget(old);
    }
  }

  /**
   * Takes the analysis for `uri` if its edited trees were kept for exactly the text that the
   * recorded edits lead to (`text`; null: whatever text they are of, for a notebook's trees, which
   * the lint edits to the new joined cells with `ModuleTrees.editTo`); otherwise disposes of it. With
   * `version`, the document's version, the texts are not compared when the recorded edits lead to
   * that version (comparing two equal 200 KB strings costs ~0.2 ms a keystroke). The caller owns
   * the returned analysis (it passes it to the lint as `previous`, then disposes of it).
   * When there is none, the caller parses from scratch and keeps the new tree, which would free the
   * least recent one: that one is freed now, before the parse, so the parser's WebAssembly memory
   * (which never shrinks) never holds `limit + 1` trees. An incremental parse needs no such room:
   * tree-sitter's new tree shares the old one's unchanged subtrees (reference-counted, tree-sitter's
   * `ts_parser_parse` with an old tree), so the old tree costs little beside it.
   */
  take(uri: string, text: string | null, version = -1): DocumentAnalysis | undefined {
    const k = this.kept.get(uri);
    this.kept.delete(uri);
    if (
      k &&
      (text === null ||
        (version >= 0 && k.version === version && (k.text === null || k.text.length === text.length)) ||
        (k.text !== null && k.text === text))
    )
      return k.analysis;
    k?.analysis.dispose();
    // Room for the tree the caller parses next, before the parse.
    this.shrink(this.limit - 1, text?.length ?? 0);
    return undefined;
  }

  /**
   * Keeps `analysis` (a lint's, its trees the parse of `text`) as the most recent, version `version`
   * of the document, with `model`, what the machine hovers read of the lint's model of its trees
   * (machineHelp.ts `machineModel`); frees the least recent analyses beyond the limit.
   */
  keep(uri: string, text: string, analysis: DocumentAnalysis, version = -1, model?: MachineModel): void {
    this.forget(uri);
    this.kept.set(uri, { analysis, text, version, unedited: true, chars: text.length, ...(model ? { model } : {}) });
    this.shrink(this.limit, 0, uri);
  }

  /**
   * The model kept with `uri`'s tree, while the tree is still of document version `version`
   * (no change applied since: an edited tree's nodes no longer match their offsets); else undefined.
   */
  modelOf(uri: string, version: number): MachineModel | undefined {
    return this.current(uri, version)?.model;
  }

  /**
   * `uri`'s kept tree while it is the parse of document version `version` (no change applied since
   * it was kept), for lookups on the current text (a `# noqa` comment, a fix's syntax check); else
   * undefined. The caller must not edit or delete it.
   */
  treeOf(uri: string, version: number): ModuleTrees | undefined {
    return this.current(uri, version)?.analysis.trees;
  }

  /**
   * `uri`'s kept analysis while its trees are the parse of document version `version` (as
   * {@link treeOf}), for what it kept of that text (a notebook's joined cells); else undefined. The
   * caller must not edit or dispose of it.
   */
  analysisOf(uri: string, version: number): DocumentAnalysis | undefined {
    return this.current(uri, version)?.analysis;
  }

  private current(uri: string, version: number): KeptAnalysis | undefined {
    const k = this.kept.get(uri);
    return k && k.unedited && k.version === version && version >= 0 ? k : undefined;
  }

  /** Drops the analysis of a closed document (or one evicted: its trees are freed). */
  forget(uri: string): void {
    this.kept.get(uri)?.analysis.dispose();
    this.kept.delete(uri);
  }

  /**
   * Applies one didChange notification's content changes, in order, to the kept trees.
   * @param before the document as it was before the change (TextDocuments updates it after this
   *   runs). A single range change to the version the tree is of is mapped with its `offsetAt` and
   *   `positionAt` (the offsets TextDocuments itself applies; its line table is kept per version):
   *   no copy of the text is built. Otherwise the kept text (or `before`'s) is edited change by
   *   change, the offsets found by {@link offsetOf}.
   */
  applyChanges(params: DidChangeTextDocumentParams, before?: DocumentBefore): void {
    const k = this.kept.get(params.textDocument.uri);
    if (!k) return;
    // The tree's nodes (and the model's) are of the text before this change.
    k.model = undefined;
    k.unedited = false;
    const versionBefore = k.version;
    const changes = params.contentChanges;
    const first = changes[0];
    const atVersion =
      !!before && versionBefore >= 0 && before.version === versionBefore && params.textDocument.version > versionBefore;
    if (atVersion && changes.length === 1 && "range" in first && first.range) {
      const startIndex = before!.offsetAt(first.range.start),
        oldEndIndex = before!.offsetAt(first.range.end);
      const s = before!.positionAt(startIndex),
        e = before!.positionAt(oldEndIndex);
      k.analysis.trees.edit({
        startIndex,
        oldEndIndex,
        newEndIndex: startIndex + first.text.length,
        startPosition: { row: s.line, column: s.character },
        oldEndPosition: { row: e.line, column: e.character },
        newEndPosition: pointAfterInsert({ row: s.line, column: s.character }, first.text),
      });
      k.text = null;
      k.version = params.textDocument.version;
      return;
    }
    let text = k.text ?? (atVersion ? before!.getText() : null);
    if (text === null) {
      this.forget(params.textDocument.uri);
      return;
    }
    for (const change of params.contentChanges) {
      if (!("range" in change) || !change.range) {
        this.forget(params.textDocument.uri);
        return;
      }
      k.version = -1;
      const startIndex = offsetOf(text, change.range.start);
      const oldEndIndex = offsetOf(text, change.range.end);
      const newEndPosition = pointAfterInsert(
        { row: change.range.start.line, column: change.range.start.character },
        change.text,
      );
      k.analysis.trees.edit({
        startIndex,
        oldEndIndex,
        newEndIndex: startIndex + change.text.length,
        startPosition: { row: change.range.start.line, column: change.range.start.character },
        oldEndPosition: { row: change.range.end.line, column: change.range.end.character },
        newEndPosition,
      });
      text = text.slice(0, startIndex) + change.text + text.slice(oldEndIndex);
    }
    k.text = text;
    // The version these edits lead to, if the kept text was the one just before them.
    k.version = versionBefore >= 0 && params.textDocument.version > versionBefore ? params.textDocument.version : -1;
  }

  /**
   * A view of `connection` for `TextDocuments.listen` whose didChange handler first applies the
   * change to the kept trees.
   * @param documentOf the open document of a URI as it is before the change (`documents.get`).
   */
  intercept(connection: Connection, documentOf?: (uri: string) => DocumentBefore | undefined): Connection {
    return new Proxy(connection, {
      get: (target, prop, receiver) => {
        if (prop === "onDidChangeTextDocument") {
          return (handler: NotificationHandler<DidChangeTextDocumentParams>) =>
            target.onDidChangeTextDocument((params) => {
              this.applyChanges(params, documentOf?.(params.textDocument.uri));
              return handler(params);
            });
        }
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }
}
