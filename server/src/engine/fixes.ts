/**
 * Text edits: offsets ↔ positions (UTF-16, as LSP), applying edits, and the "move this statement
 * above that one" fix that GPU001/GPU002 offer.
 */
import type { Position, Range, TextEdit } from "./types";
import type { SyntaxNode } from "./python/parser";
import type { ModuleModel } from "./python/model";
import type { EnvWriteEvent } from "./python/events";
import { importBindings } from "./python/walker";

/** Start offsets of each line of `text` (line breaks: \n, \r\n, \r). */
export function lineStarts(text: string): readonly number[] {
  // The rules ask for the same text's line starts once per finding: the last answer is kept, so a
  // file with n findings costs one scan, not n. Callers never modify the array.
  if (text === lastText) return lastStarts;
  const starts = [0];
  if (!text.includes("\r")) {
    // Only \n: the engine's search finds each (a loop over every character cost the editor ~0.4 ms per keystroke on a 5,000-line file).
    for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  } else {
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      if (ch === 13) {
        if (text.charCodeAt(i + 1) === 10) i++;
        starts.push(i + 1);
      } else if (ch === 10) starts.push(i + 1);
    }
  }
  lastText = text;
  lastStarts = starts;
  return starts;
}
let lastText: string | null = null;
let lastStarts: readonly number[] = [0];

/**
 * The start offset of the line holding `offset` (line breaks as {@link lineStarts}: \n, \r\n, \r),
 * found by scanning back from it: the rules' fixes ask about the lines of a few nodes, and a
 * whole-text {@link lineStarts} at every keystroke was 0.15 MiB of garbage on a 5,000-line file.
 * `offset` may be the line break that ends the line (a node's end).
 */
export function lineStartAt(text: string, offset: number): number {
  for (let i = Math.min(offset, text.length) - 1; i >= 0; i--) {
    const c = text.charCodeAt(i);
    if (c === 10 || c === 13) return i + 1;
  }
  return 0;
}

/** The start offset of the line after the one holding `offset` ({@link lineStartAt}), or null on the last line. */
export function nextLineStartAt(text: string, offset: number): number | null {
  const end = lineEndAt(text, offset);
  if (end >= text.length) return null;
  return text.charCodeAt(end) === 13 && text.charCodeAt(end + 1) === 10 ? end + 2 : end + 1;
}

/** The offset of the line break that ends the line holding `offset` (text.length on the last line). */
export function lineEndAt(text: string, offset: number): number {
  for (let i = offset; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || c === 13) return i;
  }
  return text.length;
}

/** Where inserting `text` at point `start` ends (lines end at \n, \r\n or a lone \r, as in LSP); columns in UTF-16 code units. */
export function pointAfterInsert(
  start: { row: number; column: number },
  text: string,
): { row: number; column: number } {
  const inserted = lineStarts(text);
  return inserted.length === 1
    ? { row: start.row, column: start.column + text.length }
    : { row: start.row + inserted.length - 1, column: text.length - inserted[inserted.length - 1] };
}

/** Offset of a position, clamped into the text. */
export function offsetAt(starts: readonly number[], text: string, p: Position): number {
  if (p.line >= starts.length) return text.length;
  return Math.min(starts[p.line] + p.character, p.line + 1 < starts.length ? starts[p.line + 1] : text.length);
}

/**
 * Applies non-overlapping edits to `text`.
 * @throws Error when two edits overlap.
 */
export function applyEdits(text: string, edits: TextEdit[]): string {
  const starts = lineStarts(text);
  const abs = edits
    .map((e) => ({ s: offsetAt(starts, text, e.range.start), e: offsetAt(starts, text, e.range.end), t: e.newText }))
    .sort((a, b) => a.s - b.s || a.e - b.e);
  let out = "";
  let at = 0;
  for (const e of abs) {
    if (e.s < at) throw new Error("overlapping edits");
    out += text.slice(at, e.s) + e.t;
    at = e.e;
  }
  return out + text.slice(at);
}

/** The line-break sequence the text uses (first one found; \n by default). */
export function eolOf(text: string): string {
  const i = text.search(/\r\n|\r|\n/);
  if (i < 0) return "\n";
  return text[i] === "\r" ? (text[i + 1] === "\n" ? "\r\n" : "\r") : "\n";
}

/** The module-level statement that contains `node` (a direct child of the module). */
export function topLevelStatement(node: SyntaxNode): SyntaxNode {
  let n = node;
  while (n.parent && n.parent.type !== "module") n = n.parent;
  return n;
}

/** Whether a statement is alone on its lines (nothing but whitespace before it, nothing but a comment after). */
function ownsItsLines(stmt: SyntaxNode, text: string): boolean {
  const lineStart = lineStartAt(text, stmt.startIndex);
  if (text.slice(lineStart, stmt.startIndex).trim() !== "") return false;
  const next = stmt.nextSibling;
  if (next && next.startPosition.row === stmt.endPosition.row && next.type !== "comment") return false;
  const prev = stmt.previousSibling;
  if (prev && prev.endPosition.row === stmt.startPosition.row) return false;
  return true;
}

const BUILTINS = new Set([
  "str",
  "int",
  "map",
  "len",
  "range",
  "list",
  "tuple",
  "sorted",
  "True",
  "False",
  "None",
  "join",
  "format",
]);

/** Names (identifiers) that an expression reads, ignoring attribute names and keyword names. */
function namesRead(node: SyntaxNode): Set<string> {
  const out = new Set<string>();
  const visit = (n: SyntaxNode) => {
    if (n.type === "identifier") {
      const p = n.parent;
      if (p?.type === "attribute" && p.childForFieldName("attribute")?.id === n.id) return;
      if (p?.type === "keyword_argument" && p.childForFieldName("name")?.id === n.id) return;
      out.add(n.text);
      return;
    }
    for (const c of n.namedChildren) if (c) visit(c);
  };
  visit(node);
  return out;
}

/**
 * Names bound by module-level statements that start before `offset` (read-only: shared). Each
 * model keeps its answers by offset, and the statements are visited by sibling links up to
 * `offset` only: building the module's whole child list for every moved write made a file with
 * many writes quadratic (1,000 writes, 3.4 s of 9.3 s).
 */
function boundBefore(model: ModuleModel, offset: number): ReadonlySet<string> {
  const byOffset = (model.derived.boundBefore ??= new Map());
  const known = byOffset.get(offset);
  if (known) return known;
  const out = new Set<string>();
  byOffset.set(offset, out);
  for (const s of model.tree.statements) {
    if (s.startIndex >= offset) break;
    if (s.type === "import_statement" || s.type === "import_from_statement")
      for (const [n] of importBindings(s)) out.add(n);
    else if (s.type === "expression_statement") {
      const a = s.namedChildren[0];
      if (a?.type === "assignment" && a.childForFieldName("left")?.type === "identifier")
        out.add(a.childForFieldName("left")!.text);
    } else if (s.type === "function_definition" || s.type === "class_definition") {
      const n = s.childForFieldName("name")?.text;
      if (n) out.add(n);
    }
  }
  return out;
}

/** Own-line comments that are not about the next statement: cell markers and tool directives. */
const DIRECTIVE_COMMENT = /^#\s*(%%|In\s*\[|!|-\*-|(fmt|isort|pylint|type|noqa|ruff|pyright|mypy|gpu-pilot)\b)/i;

/**
 * The comment lines directly above `stmt` that belong to it, first to last: each alone on its line,
 * indented as the statement is, with no blank line between it and the statement (or the next
 * comment), and not a cell marker (`# %%`) or a tool's directive (`# fmt: off`, `# noqa`, ...).
 * Empty when the line above is code, blank, or a comment of another indentation or cell. Read off
 * the tree at each line (a `#` line inside a string is no comment), not from the statement's
 * siblings: a comment above a block's first statement belongs to the `if` or `def` around it.
 */
function leadingComments(
  model: ModuleModel,
  stmt: SyntaxNode,
  sameCell?: (a: number, b: number) => boolean,
): Array<{ startIndex: number; row: number }> {
  const text = model.text;
  const stmtLine = lineStartAt(text, stmt.startIndex);
  const indent = text.slice(stmtLine, stmt.startIndex);
  const out: Array<{ startIndex: number; row: number }> = [];
  for (let lineEnd = stmtLine, row = stmt.startPosition.row - 1; lineEnd > 0 && row >= 0; row--) {
    // The line above: its break ends at lineEnd (\r\n, \n or \r).
    const brk = text.charCodeAt(lineEnd - 1) === 10 && text.charCodeAt(lineEnd - 2) === 13 ? lineEnd - 2 : lineEnd - 1;
    const start = lineStartAt(text, brk);
    const at = start + indent.length;
    if (text.slice(start, at) !== indent || text[at] !== "#") break;
    const node = model.tree.descendantForIndex(at);
    if (!node || node.type !== "comment" || node.startIndex !== at) break;
    if (DIRECTIVE_COMMENT.test(node.text)) break;
    if (sameCell && !sameCell(row, stmt.startPosition.row)) break;
    out.unshift({ startIndex: at, row });
    lineEnd = start;
  }
  return out;
}

/**
 * Builds the edits that move the statement of `write` to just above the module-level statement
 * containing `anchor` (the first framework import), adding the `os` import it needs when that
 * import comes later. Returns null when the move is not possible without changing meaning: the
 * write shares its line with other statements, sits in a function, or its value reads names that
 * are bound only after the anchor. The statement moves with its trailing comment (a comment on its
 * line is about it; whether it stays true is the user's to judge, in the fix's diff) and with the
 * comment lines directly above it ({@link leadingComments}: left behind, they would describe the
 * statement that now follows them). When a blank line is both above and below what moves, the one
 * below goes too, so the move leaves no doubled blank line (`tidyBlankLine`, default true; notebooks
 * pass false: the next line may be another cell's). `sameCell(a, b)`: whether two 0-based lines are
 * in the same notebook cell (a comment at the end of the cell above is not the statement's).
 */
export function moveAboveEdits(
  model: ModuleModel,
  write: EnvWriteEvent,
  anchor: SyntaxNode,
  tidyBlankLine = true,
  sameCell?: (a: number, b: number) => boolean,
): { edits: TextEdit[]; safe: boolean } | null {
  const stmt = write.statement;
  if (!stmt || write.inFunction) return null;
  const text = model.text;
  const target = topLevelStatement(anchor);
  if (stmt.startIndex <= target.startIndex) return null;
  if (!ownsItsLines(stmt, text)) return null;
  const targetLineStart = lineStartAt(text, target.startIndex);
  if (text.slice(targetLineStart, target.startIndex).trim() !== "") return null;

  const bound = boundBefore(model, target.startIndex);
  const needs = namesRead(stmt);
  const eol = eolOf(text);
  let importLine = "";
  for (const name of needs) {
    if (bound.has(name) || BUILTINS.has(name)) continue;
    const path = model.symbols.get(name);
    if (path === "os")
      importLine += `import os${eol}`.replace("import os", name === "os" ? "import os" : `import os as ${name}`);
    else if (path === "os.environ" || path === "os.putenv")
      importLine += `from os import ${path.slice(3)}${name === path.slice(3) ? "" : ` as ${name}`}${eol}`;
    else return null; // the value reads something defined later: moving would break it
  }

  // The moved text: the statement's full lines with the comment lines above it, dedented by its own
  // indentation (the comments have the same).
  const comments = leadingComments(model, stmt, sameCell);
  const firstRow = comments[0]?.row ?? stmt.startPosition.row;
  const lastRow = stmt.endPosition.row;
  const indent = stmt.startPosition.column;
  const stmtLineStart = lineStartAt(text, stmt.startIndex);
  const firstStart = lineStartAt(text, (comments[0] ?? stmt).startIndex);
  const next = nextLineStartAt(text, stmt.endIndex); // the line after the statement's last; null: none
  const endOffset = next ?? text.length;
  const block = text.slice(firstStart, endOffset);
  const lines = block.split(/(?<=\r\n|\n|\r)/);
  const moved = lines
    .map((l, i) => (i <= comments.length ? l.slice(indent) : l.replace(new RegExp(`^ {0,${indent}}`), "")))
    .join("");
  const movedText = moved.endsWith("\n") || moved.endsWith("\r") ? moved : moved + eol;

  const edits: TextEdit[] = [];
  const insertAt: Position = { line: target.startPosition.row, character: 0 };
  edits.push({ range: { start: insertAt, end: insertAt }, newText: importLine + movedText });
  // Removal: the whole lines; a block left empty gets `pass`.
  const parent = stmt.parent;
  const onlyStatement =
    parent?.type === "block" && parent.namedChildren.filter((c) => c && c.type !== "comment").length === 1;
  // A line [from, to) that ends with a line break and holds only whitespace.
  const blank = (from: number, to: number | null) => to !== null && text.slice(from, to).trim() === "";
  // A blank line above and below: removing the statement would leave two in a row; take the one below.
  const tidy =
    tidyBlankLine &&
    !onlyStatement &&
    firstStart > 0 &&
    blank(lineStartAt(text, firstStart - 1), firstStart) &&
    next !== null &&
    blank(next, nextLineStartAt(text, next));
  const removal: Range = tidy
    ? { start: { line: firstRow, character: 0 }, end: { line: lastRow + 2, character: 0 } }
    : next !== null
      ? { start: { line: firstRow, character: 0 }, end: { line: lastRow + 1, character: 0 } }
      : {
          start: { line: firstRow, character: 0 },
          end: { line: lastRow, character: endOffset - lineStartAt(text, stmt.endIndex) },
        };
  // `pass` takes the statement's own indentation text: spaces in a tab-indented block are a TabError
  // or an unindent to no level for CPython.
  edits.push({
    range: removal,
    newText: onlyStatement ? `${text.slice(stmtLineStart, stmt.startIndex)}pass${eol}` : "",
  });
  const literalValue = write.value === null || write.literal !== null;
  return { edits, safe: literalValue && !write.nested };
}
