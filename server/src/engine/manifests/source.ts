/**
 * A manifest's text with its line table: offsets (JavaScript string indices, i.e. UTF-16 code
 * units, as the `yaml` package reports them) to LSP positions and back, and whole-line ranges for
 * edits that remove an entry.
 */
import { eolOf, lineStarts } from "../fixes";
import type { Position, Range } from "../types";

/** The text of one manifest and its line starts (line breaks: \n, \r\n, \r, as LSP counts them). */
export class SourceText {
  /** Start offset of each line. */
  readonly starts: readonly number[];
  /** The line break the text uses (first one found; \n by default). */
  readonly eol: string;

  constructor(readonly text: string) {
    this.starts = lineStarts(text);
    this.eol = eolOf(text);
  }

  /** 0-based line of an offset. */
  lineOf(offset: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The LSP position of an offset (clamped into the text). */
  position(offset: number): Position {
    const o = Math.max(0, Math.min(offset, this.text.length));
    const line = this.lineOf(o);
    return { line, character: o - this.starts[line] };
  }

  /** The LSP range of the offsets [start, end). */
  range(start: number, end: number): Range {
    return { start: this.position(start), end: this.position(end) };
  }

  /** Offset of the start of 0-based `line`. */
  lineStart(line: number): number {
    return this.starts[Math.min(line, this.starts.length - 1)];
  }

  /** Offset of the end of 0-based `line`, before its line break. */
  lineEnd(line: number): number {
    if (line + 1 >= this.starts.length) return this.text.length;
    let end = this.starts[line + 1];
    if (this.text[end - 1] === "\n") end--;
    if (this.text[end - 1] === "\r") end--;
    return end;
  }

  /** Whether only spaces and tabs stand between the start of the line of `offset` and `offset`. */
  blankBefore(offset: number): boolean {
    return this.text.slice(this.lineStart(this.lineOf(offset)), offset).trim() === "";
  }

  /**
   * The range that removes lines `first`..`last` (0-based, inclusive) with their line breaks. When
   * `last` is the final line and has no line break, the break before `first` goes instead, so no
   * empty line is left behind.
   */
  wholeLines(first: number, last: number): Range {
    if (last + 1 < this.starts.length)
      return { start: { line: first, character: 0 }, end: { line: last + 1, character: 0 } };
    const endChar = this.text.length - this.starts[last];
    if (first === 0) return { start: { line: 0, character: 0 }, end: { line: last, character: endChar } };
    return { start: this.position(this.lineEnd(first - 1)), end: { line: last, character: endChar } };
  }
}
