/**
 * A Python module parsed as a run of chunks, each a few top-level statements with its own
 * tree-sitter tree, so that an edit re-parses the chunk it falls in and nothing else.
 *
 * Why (BENCHMARKS.md "Editor: what tree-sitter's incremental parse re-does"): an
 * incremental parse of one tree cannot reuse a *fragile* subtree, and in tree-sitter-python every
 * `module_repeat1` node of a fresh parse is fragile, so the first edits after opening a 5,000-line
 * file re-consumed the whole file (p95 of the parse alone 9–25 ms). A chunk's parse costs what
 * its own text costs.
 *
 * Soundness: a chunk starts at a logical line at column 0 (common/src/python/lineStructure.ts
 * `columnZeroLines`, CPython's line rules: not inside brackets, a string or after a `\`), which is
 * not an `else`/`elif`/`except`/`finally` clause and does not follow a decorator. There every
 * enclosing block has ended, so the statements of a chunk parse as they do in the whole file.
 * Each chunk is parsed over the document's own text with `includedRanges` (tree-sitter's
 * `ts_parser_set_included_ranges`), so node offsets and points are the document's; positions are
 * those of {@link parsePython} (UTF-16 code units, a lone `\r` read as `\n`). Every chunk tree
 * reads node text from one holder that always has the text of the current version.
 */
import type { Edit, Node, Point, Tree } from "web-tree-sitter";
import { columnZeroLines, isWordCode } from "../../../../common/src/python/lineStructure";
import { pythonParser, syntaxErrorCount } from "./parser";
import { pointAfterInsert } from "../fixes";
import { textChange, type TextChange } from "./keptText";

/**
 * One split point in {@link SPLIT_EVERY} (on average) ends a chunk: the one whose first line's
 * hash is 0 modulo it. The choice depends only on that line (content-defined chunking, as rsync
 * and backup tools cut files), so an edit moves no boundary but those of the lines it touches,
 * and a module edited step by step is cut exactly as the same text parsed afresh. Smaller chunks
 * re-parse less per edit; each costs a parse call (~0.08 ms) when a file is opened and an edit of
 * its tree (~1.4 µs) per edit above it (measured on the 5,000-line training file).
 */
export const SPLIT_EVERY = 4;

/**
 * A touched chunk is re-parsed incrementally from its edited old tree. tree-sitter's error
 * recovery can build a different tree incrementally than afresh for the same broken text, so a
 * chunk shorter than this (UTF-16 code units; almost all are) whose incremental parse has a syntax
 * error is parsed again afresh: an edited module is then the same text parsed anew. A longer one
 * (a big class) keeps the incremental tree, as one tree for the whole file did (a fresh parse costs
 * ~0.3 ms per KB). On the 5,000-line file, an edit of its 3 KB chunk: p50 0.22 ms incrementally,
 * 0.9 ms afresh.
 */
export const INCREMENTAL_FROM = 8192;

/** First words of a column-0 line that continue the statement before it. */
const CONTINUING = new Set(["else", "elif", "except", "finally"]);

interface Chunk {
  /** Offsets in the current text: [start, end). */
  start: number;
  end: number;
  /** 0-based line of `start` (a chunk starts at column 0). */
  row: number;
  tree: Tree;
  /** An edit touched the chunk since it was parsed: {@link ModuleTrees.next} re-parses it. */
  dirty: boolean;
  statements?: Node[];
  /**
   * Each statement's end (relative to the chunk's start) and type, aligned with `statements`: a
   * chunk that only moves keeps them (its nodes are fetched again, their ends and types are not
   * asked of the parser again: two calls per statement and keystroke, ~2.7 ms on a flat
   * 5,000-line script).
   */
  shapes?: { ends: number[]; types: string[] };
  errors?: number;
  /** The tree's root `hasError`, kept: moving a chunk (`Tree.edit` after it) changes no node's kind. */
  hasError?: boolean;
}

/** The text every chunk tree of one document reads node text from. */
interface TextHolder {
  text: string;
}

/**
 * A module's chunk trees. The text must be what {@link parsePython} parses: within the size and
 * nesting limits (lint.ts checks them first), lone `\r` already read as `\n` ({@link pythonInput}).
 */
export class ModuleTrees {
  /** {@link statements}, kept until the next edit. */
  private all: Node[] | undefined;
  private edited = false;
  /** What the recorded edits changed ({@link pendingChange}) and the length of the text after them. */
  private change: TextChange | undefined;
  private length = 0;

  /** @param splitting cut the text into chunks (the editor); false: one chunk, one tree (the CLI). */
  private constructor(
    private readonly holder: TextHolder,
    private chunks: Chunk[],
    private readonly splitting: boolean,
  ) {}

  /**
   * Parses `text` from scratch.
   * @throws Error if parser.ts `initPythonParser` has not resolved yet.
   */
  static parse(text: string, splitting = true): ModuleTrees {
    const holder = { text };
    const chunks = split(holder, splitting, 0, 0, text.length, new Map());
    return new ModuleTrees(holder, chunks.made, splitting);
  }

  /**
   * Parses only `ranges` of `text` (each a run of whole top-level statements, {@link topLevelStatements},
   * in order and not overlapping): the module's statements are theirs alone, with the document's
   * offsets and points. For a reader that needs some statements only (the writers' scan,
   * python/project.ts); never edited.
   * @throws Error if parser.ts `initPythonParser` has not resolved yet.
   */
  static parseRanges(text: string, ranges: readonly StatementRange[]): ModuleTrees {
    const holder = { text };
    const chunks = ranges.map((r) => parseChunk(holder, r.start, r.end, r.row, r.end >= text.length ? -1 : r.endRow));
    return new ModuleTrees(holder, chunks, true);
  }

  /** The text the trees are of (the last {@link next}'s or {@link parse}'s). */
  get text(): string {
    return this.holder.text;
  }

  /** The chunks' ranges, [start, end) offsets (tests). */
  get chunkRanges(): Array<[number, number]> {
    return this.chunks.map((c) => [c.start, c.end]);
  }

  /** How many chunks (and trees) the module has. */
  get chunkCount(): number {
    return this.chunks.length;
  }

  /**
   * Records one edit of the text (LSP content change order; offsets and points as in
   * `Tree.edit`): chunks after it move, chunks it touches are re-parsed by {@link next}.
   */
  edit(e: Edit): void {
    this.edited = true;
    this.all = undefined;
    const delta = e.newEndIndex - e.oldEndIndex;
    this.noteChange(e, delta);
    const rows = e.newEndPosition.row - e.oldEndPosition.row;
    for (const c of this.chunks) {
      if (c.end < e.startIndex) continue;
      c.tree.edit(e);
      c.statements = undefined;
      if (c.start > e.oldEndIndex) {
        c.start += delta;
        c.end += delta;
        c.row += rows;
        continue;
      }
      c.dirty = true;
      c.errors = undefined;
      c.hasError = undefined;
      c.shapes = undefined;
      if (e.startIndex < c.start) {
        c.start = e.startIndex;
        c.row = e.startPosition.row;
      }
      c.end = c.end >= e.oldEndIndex ? c.end + delta : e.newEndIndex;
    }
  }

  /**
   * Records the one edit that turns {@link text} into `newText` (keptText.ts `textChange`: the
   * common prefix and suffix kept), for a caller that has the new text but not the edits (a
   * notebook's joined cells). Then call {@link next} with `newText`.
   */
  editTo(newText: string): void {
    const old = this.holder.text;
    if (this.edited || old === newText) return;
    const c = textChange(old, newText);
    const startPosition = pointAfter(old, 0, 0, c.start);
    this.edit({
      startIndex: c.start,
      oldEndIndex: c.oldEnd,
      newEndIndex: c.newEnd,
      startPosition,
      oldEndPosition: pointAfter(old, c.start, startPosition.row, c.oldEnd, startPosition.column),
      newEndPosition: pointAfter(newText, c.start, startPosition.row, c.newEnd, startPosition.column),
    });
  }

  /**
   * Where the text after the recorded edits differs from {@link text}: the first edit's range,
   * widened by each later one (a common prefix and suffix are kept, not necessarily the longest:
   * keptText.ts `textChange` finds those by comparing texts, ~0.2 ms on a 200 KB file). Undefined
   * before any edit.
   */
  get pendingChange(): TextChange | undefined {
    return this.change;
  }

  private noteChange(e: Edit, delta: number): void {
    const c = this.change;
    if (!c) {
      this.change = { start: e.startIndex, oldEnd: e.oldEndIndex, newEnd: e.newEndIndex };
      this.length = this.holder.text.length + delta;
      return;
    }
    // Suffixes are counted from the end: the part after both edits is unchanged by either.
    const before = this.length,
      after = before + delta;
    const suffix = Math.min(before - c.newEnd, before - e.oldEndIndex);
    this.change = {
      start: Math.min(c.start, e.startIndex),
      oldEnd: this.holder.text.length - suffix,
      newEnd: after - suffix,
    };
    this.length = after;
  }

  /**
   * The module of `text`, the text after the recorded edits: touched chunks re-parsed (each
   * incrementally from its old tree when it starts where it did), the others kept as they are.
   * This object gives its trees to the result and holds none after.
   */
  next(text: string): ModuleTrees {
    const unchanged = !this.edited && this.holder.text === text;
    this.holder.text = text;
    const old = this.chunks;
    this.chunks = [];
    if (unchanged) return new ModuleTrees(this.holder, old, this.splitting);
    if (!this.edited) {
      for (const c of old) c.tree.delete();
      return ModuleTrees.parse(text, this.splitting);
    }
    const out: Chunk[] = [];
    let k = 0;
    while (k < old.length) {
      if (!old[k].dirty) {
        out.push(old[k++]);
        continue;
      }
      // A run of touched chunks, widened left while its first line no longer starts a chunk (a
      // clause keyword typed into it): by the untouched chunk before it, whose start still does.
      while (k > 0 && out[out.length - 1] === old[k - 1] && !startsChunk(text, old[k].start)) {
        k--;
        out.pop();
      }
      let j = k;
      while (j + 1 < old.length && old[j + 1].dirty) j++;
      const cleanStarts = new Map<number, number>();
      for (let m = j + 1; m < old.length; m++) if (!old[m].dirty) cleanStarts.set(old[m].start, m);
      const reusable = new Map<number, Tree>();
      for (let m = k; m <= j; m++) reusable.set(old[m].start, old[m].tree);
      const { made, syncedAt } = split(
        this.holder,
        this.splitting,
        old[k].start,
        old[k].row,
        old[j].end,
        cleanStarts,
        reusable,
      );
      out.push(...made);
      const until = syncedAt ?? old.length;
      const kept = new Set(made.map((c) => c.tree));
      for (let m = k; m < until; m++) if (!kept.has(old[m].tree)) old[m].tree.delete();
      k = until;
    }
    return new ModuleTrees(this.holder, out, this.splitting);
  }

  /** The module's top-level named nodes (statements and comments), in source order. */
  get statements(): Node[] {
    if (this.all) return this.all;
    const out: Node[] = (this.all = []);
    for (const c of this.chunks) {
      for (const s of statementsOf(c)) out.push(s);
    }
    return out;
  }

  /**
   * The end offset and the type of each of {@link statements}, in the same order (for callers that
   * ask them of every statement at every keystroke: python/cache.ts `Memo`).
   */
  statementShapes(): { ends: number[]; types: string[] } {
    const ends: number[] = [],
      types: string[] = [];
    for (const c of this.chunks) {
      if (!c.shapes) {
        const sts = statementsOf(c);
        c.shapes = { ends: sts.map((n) => n.endIndex - c.start), types: sts.map((n) => n.type) };
      }
      for (let i = 0; i < c.shapes.ends.length; i++) {
        ends.push(c.start + c.shapes.ends[i]);
        types.push(c.shapes.types[i]);
      }
    }
    return { ends, types };
  }

  /** Whether any chunk has a syntax error (ERROR or MISSING node). */
  get hasError(): boolean {
    return this.chunks.some((c) => (c.hasError ??= c.tree.rootNode.hasError));
  }

  /** ERROR and MISSING nodes of all chunks (parser.ts `syntaxErrorCount` per chunk, kept). */
  syntaxErrorCount(): number {
    let n = 0;
    for (const c of this.chunks) n += c.errors ??= syntaxErrorCount(c.tree);
    return n;
  }

  /** `Node.descendantsOfType` over the module, optionally only between two points. */
  descendantsOfType(types: string | string[], start?: Point, end?: Point): Node[] {
    const out: Node[] = [];
    // The chunks before `start` are skipped by their rows (a chunk ends where the next one starts,
    // at column 0), found by binary search: no call into the parser for each chunk (the noqa check
    // asks once per finding line: ~0.6 ms per keystroke on a flat 5,000-line script).
    const chunks = this.chunks;
    let k = 0;
    if (start) {
      let hi = chunks.length - 1;
      while (k < hi) {
        const mid = (k + hi) >> 1;
        if (chunks[mid + 1].row <= start.row) k = mid + 1;
        else hi = mid;
      }
    }
    for (; k < chunks.length; k++) {
      const c = chunks[k];
      if (end && c.row > end.row) break;
      for (const n of c.tree.rootNode.descendantsOfType(types, start, end)) if (n) out.push(n);
    }
    return out;
  }

  /** The smallest node that spans `index`, or null past the text. */
  descendantForIndex(index: number): Node | null {
    const c = this.chunks.find((ch) => index >= ch.start && index < ch.end) ?? this.chunks[this.chunks.length - 1];
    return c ? c.tree.rootNode.descendantForIndex(index) : null;
  }

  /**
   * The number of syntax errors of `newText`, this text with `edits` applied (offsets in this
   * text, non-overlapping), leaving this module as it is: only the chunks the edits touch are
   * parsed again (lint.ts uses it to check that a fix adds no syntax error).
   */
  syntaxErrorsAfter(newText: string, edits: ReadonlyArray<{ start: number; end: number; text: string }>): number {
    const copy = new ModuleTrees(
      { text: this.holder.text },
      this.chunks.map((c) => ({ ...c, tree: c.tree.copy(), statements: undefined })),
      this.splitting,
    );
    try {
      for (const e of [...edits].sort((a, b) => b.start - a.start)) copy.edit(editOf(copy.holder.text, e));
      const next = copy.next(newText);
      try {
        return next.syntaxErrorCount();
      } finally {
        next.delete();
      }
    } finally {
      copy.delete();
    }
  }

  /** Frees every tree this object holds. */
  delete(): void {
    for (const c of this.chunks) c.tree.delete();
    this.chunks = [];
    this.all = undefined;
  }
}

/** A top-level statement's place: [start, end) offsets, its first line and the line `end` starts (0-based). */
export interface StatementRange {
  start: number;
  end: number;
  row: number;
  endRow: number;
  /**
   * The first word of its first line that is not a decorator (`def`, `async`, `class`, `import`, an
   * identifier ...; "" when the line starts with no word).
   */
  head: string;
  /** The offset of {@link head}'s first character (after the decorators, if any; `start` when none). */
  headAt: number;
}

/**
 * The top-level statements of `text` in order, covering it: each starts at a logical line at column
 * 0 (common/src/python/lineStructure.ts `columnZeroLines`, CPython's line rules) that is not an
 * `else`/`elif`/`except`/`finally` clause and does not follow a decorator, which is where
 * {@link ModuleTrees.parse} may cut a chunk, so each parses as it does in the whole file. Linear.
 */
export function topLevelStatements(text: string): StatementRange[] {
  const out: StatementRange[] = [];
  const wordAt = (offset: number): string => {
    let e = offset;
    while (e < text.length && isWordCode(text.charCodeAt(e))) e++;
    return text.slice(offset, e);
  };
  let current: StatementRange = { start: 0, end: text.length, row: 0, endRow: -1, head: "", headAt: 0 };
  let decorator = text.charCodeAt(0) === 64;
  if (!decorator) current.head = wordAt(0);
  columnZeroLines(text, { offset: 0, line: 0 }, (offset, line) => {
    const wasDecorator = decorator;
    decorator = text.charCodeAt(offset) === 64;
    if (wasDecorator) {
      if (!decorator && !current.head) {
        current.head = wordAt(offset);
        current.headAt = offset;
      }
      return false;
    }
    const word = wordAt(offset);
    if (CONTINUING.has(word)) return false;
    current.end = offset;
    current.endRow = line;
    out.push(current);
    current = { start: offset, end: text.length, row: line, endRow: -1, head: decorator ? "" : word, headAt: offset };
    return false;
  });
  out.push(current);
  return out;
}

/** A chunk's top-level named nodes (statements and comments), fetched once per move or parse. */
function statementsOf(c: Chunk): Node[] {
  return (c.statements ??= c.tree.rootNode.namedChildren.filter((n): n is Node => !!n));
}

/**
 * Whether a split point (a column-0 logical line not after a decorator) at `offset` starts a
 * chunk: its first word is not a clause of the statement before (`else`, `except`, ...), and
 * its first line (up to 120 code units) hashes to 0 modulo {@link SPLIT_EVERY} (FNV-1a). Offset 0
 * always does.
 */
function startsChunk(text: string, offset: number): boolean {
  if (offset === 0) return true;
  let e = offset;
  while (e < text.length && isWordCode(text.charCodeAt(e))) e++;
  if (e - offset <= 7 && CONTINUING.has(text.slice(offset, e))) return false;
  let h = 0x811c9dc5;
  for (let i = offset, end = Math.min(text.length, offset + 120); i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) break;
    h = Math.imul(h ^ c, 0x01000193);
  }
  h ^= h >>> 15;
  return (h >>> 0) % SPLIT_EVERY === 0;
}

/**
 * Chunks of the text from `start` (a chunk start at line `row`): each ends where the next starts
 * ({@link startsChunk}) or at the end of the text; the scan stops at a chunk start at or after
 * `dirtyEnd` that is in `cleanStarts` (the chunks from there on are unchanged). `reusable`: old
 * trees by start offset, edited to this text.
 */
function split(
  holder: TextHolder,
  splitting: boolean,
  start: number,
  row: number,
  dirtyEnd: number,
  cleanStarts: ReadonlyMap<number, number>,
  reusable = new Map<number, Tree>(),
): { made: Chunk[]; syncedAt?: number } {
  const text = holder.text;
  const made: Chunk[] = [];
  let from = start,
    fromRow = row,
    syncedAt: number | undefined;
  let decorator = text.charCodeAt(start) === 64; // `@`: the next line belongs to this definition
  const close = (end: number, endRow: number) => {
    made.push(parseChunk(holder, from, end, fromRow, endRow, reusable.get(from)));
    reusable.delete(from);
    from = end;
    fromRow = endRow;
  };
  if (splitting)
    columnZeroLines(text, { offset: start, line: row }, (offset, line) => {
      const wasDecorator = decorator;
      decorator = text.charCodeAt(offset) === 64;
      if (wasDecorator || !startsChunk(text, offset)) return false;
      close(offset, line);
      const sync = offset >= dirtyEnd ? cleanStarts.get(offset) : undefined;
      if (sync !== undefined) {
        syncedAt = sync;
        return true;
      }
      return false;
    });
  if (syncedAt === undefined) close(text.length, -1);
  return { made, syncedAt };
}

/** Parses [start, end) of the holder's text (`endRow` -1: the end of the text). */
function parseChunk(holder: TextHolder, start: number, end: number, row: number, endRow: number, old?: Tree): Chunk {
  const text = holder.text;
  const endPosition = endRow >= 0 ? { row: endRow, column: 0 } : pointAfter(text, start, row, end);
  const range = { startIndex: start, endIndex: end, startPosition: { row, column: 0 }, endPosition };
  // While a fresh parse runs, the parser gets the chunk's text only: web-tree-sitter copies what the
  // callback returns into its buffer (up to 10 KB a call), so the whole rest of the text cost a 10 KB
  // copy per chunk (about 10 ms of a 5,000-line file's 122 chunks). The tree keeps the callback to
  // read its nodes' text later, after edits have moved them: then it answers with the whole rest of
  // the holder's current text. A parse that reuses an old tree reads where the old tree's nodes lie,
  // also past the chunk (the same trees only with the whole rest).
  let parsing = !old;
  const input = (i: number) => (!parsing ? holder.text.slice(i) : i < end ? holder.text.slice(i, end) : "");
  let tree = pythonParser().parse(input, old ?? null, { includedRanges: [range] });
  if (tree && old && end - start < INCREMENTAL_FROM && tree.rootNode.hasError) {
    tree.delete();
    parsing = true;
    tree = pythonParser().parse(input, null, { includedRanges: [range] });
  }
  parsing = false;
  if (!tree) throw new Error("tree-sitter returned no tree (parse cancelled)");
  return { start, end, row, tree, dirty: false };
}

/** The point of offset `end`, counting lines from `start` (line `row`, column `column`); `\r\n` and `\n` end a line (lone `\r` is already `\n`). */
function pointAfter(text: string, start: number, row: number, end: number, column = 0): Point {
  let lineStart = start - column;
  for (let i = text.indexOf("\n", start); i >= 0 && i < end; i = text.indexOf("\n", i + 1)) {
    row++;
    lineStart = i + 1;
  }
  return { row, column: end - lineStart };
}

/** A `Tree.edit` for replacing [start, end) of `text` by `inserted`. */
function editOf(text: string, e: { start: number; end: number; text: string }): Edit {
  const startPosition = pointAfter(text, 0, 0, e.start);
  const oldEndPosition = pointAfter(text, 0, 0, e.end);
  const newEndPosition = pointAfterInsert(startPosition, e.text);
  return {
    startIndex: e.start,
    oldEndIndex: e.end,
    newEndIndex: e.start + e.text.length,
    startPosition,
    oldEndPosition,
    newEndPosition,
  };
}
