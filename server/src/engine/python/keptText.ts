/**
 * What the editor keeps of a document's last linted text between keystrokes:
 * where a new version differs from it ({@link textChange}), and the state of limits.ts's nesting
 * scan at each line ({@link KeptNesting}), so that a keystroke rescans only the lines it changed
 * instead of the whole file.
 */
import { scanNesting } from "../limits";

/** Where `next` differs from `old`: `old[start, oldEnd)` was replaced by `next[start, newEnd)`. */
export interface TextChange {
  start: number;
  oldEnd: number;
  newEnd: number;
}

/**
 * The shortest change that turns `old` into `next` around one place: the common prefix and then
 * the common suffix (not overlapping it) are kept. Compares blocks of growing size with the
 * engine's string comparison, then bisects the block that differs: O(length) character compares
 * done natively, O(log length) of them from JavaScript.
 */
export function textChange(old: string, next: string): TextChange {
  const max = Math.min(old.length, next.length);
  const start = commonLength(old, next, max, false);
  const tail = commonLength(old, next, max - start, true);
  return { start, oldEnd: old.length - tail, newEnd: next.length - tail };
}

/** Length of the common prefix (or suffix, `fromEnd`) of `a` and `b`, at most `max`. */
function commonLength(a: string, b: string, max: number, fromEnd: boolean): number {
  // Block [lo, hi) counted from the start (or from the end) of each string.
  const same = (lo: number, hi: number) =>
    fromEnd
      ? a.slice(a.length - hi, a.length - lo) === b.slice(b.length - hi, b.length - lo)
      : a.slice(lo, hi) === b.slice(lo, hi);
  const at = (i: number) =>
    fromEnd ? a.charCodeAt(a.length - 1 - i) === b.charCodeAt(b.length - 1 - i) : a.charCodeAt(i) === b.charCodeAt(i);
  let lo = 0;
  for (let size = 64; lo < max; size *= 2) {
    const hi = Math.min(max, lo + size);
    if (!same(lo, hi)) {
      let h = hi; // the first difference lies in [lo, h)
      while (h - lo > 32) {
        const m = (lo + h) >> 1;
        if (same(lo, m)) lo = m;
        else h = m;
      }
      while (lo < h && at(lo)) lo++;
      return lo;
    }
    lo = hi;
  }
  return max;
}

/**
 * limits.ts's nesting scan (`nestingProblem`) of one text, kept with the bracket depth after each
 * `\n`, for a text that passed it. {@link next} answers for an edited version by scanning from the
 * start of the first changed line until, after the change, a line starts at the same depth as it
 * did in the old text: from there on both the text and the scan's state are the old ones, and the
 * old text passed. Same answer as `nestingProblem(text)` (test/unit/server/engine/python/keptText.test.ts).
 */
export class KeptNesting {
  /**
   * @param text the text scanned;
   * @param lines the offset after each `\n` of it, ascending; @param depths the bracket depth there.
   */
  private constructor(
    readonly text: string,
    private readonly lines: number[],
    private readonly depths: number[],
  ) {}
  /** Set once {@link next} has handed this state's arrays to its result. */
  private spent = false;

  /** The scan of `text` from its start: its problem (limits.ts wording) or null with the state kept. */
  static scan(text: string): { problem: string | null; kept: KeptNesting | null } {
    const lines: number[] = [],
      depths: number[] = [];
    const problem = scanNesting(text, 0, 0, (offset, depth) => {
      lines.push(offset);
      depths.push(depth);
      return false;
    });
    return problem === null ? { problem, kept: new KeptNesting(text, lines, depths) } : { problem, kept: null };
  }

  /**
   * The scan of `text`, a later version of this text, from what `change` (textChange of the two)
   * touched. The result takes over this state's arrays (patched in place: a keystroke allocates
   * only the rescanned lines' entries, not two arrays of the file's line count); this state is
   * not asked again.
   * @throws Error when asked a second time.
   */
  next(
    text: string,
    change: TextChange = textChange(this.text, text),
  ): { problem: string | null; kept: KeptNesting | null } {
    if (this.spent) throw new Error("KeptNesting.next: this state was handed on already");
    if (text === this.text) return { problem: null, kept: this };
    this.spent = true;
    const { lines, depths } = this;
    const delta = text.length - this.text.length;
    const tailStart = change.newEnd; // text[tailStart, end) is the old text's tail, shifted by delta
    // The last line start at or before the change (its `\n` lies in the unchanged prefix).
    const first = lastAtOrBefore(lines, change.start);
    const from = first >= 0 ? lines[first] : 0;
    const newLines: number[] = [],
      newDepths: number[] = [];
    let joined = -1;
    const problem = scanNesting(text, from, first >= 0 ? depths[first] : 0, (offset, depth) => {
      newLines.push(offset);
      newDepths.push(depth);
      if (offset - 1 < tailStart) return false;
      // This `\n` is in the unchanged tail: the old text has it too, at offset - delta - 1.
      const j = lastAtOrBefore(lines, offset - delta);
      if (j < 0 || lines[j] !== offset - delta || depths[j] !== depth) return false;
      joined = j;
      return true;
    });
    if (problem !== null) return { problem, kept: null };
    // Entries first+1 .. joined (or the end) are replaced by the rescanned ones; the tail after
    // `joined` moves by delta.
    const end = joined >= 0 ? joined + 1 : lines.length;
    if (delta !== 0) for (let j = end; j < lines.length; j++) lines[j] += delta;
    replaceRange(lines, first + 1, end - (first + 1), newLines);
    replaceRange(depths, first + 1, end - (first + 1), newDepths);
    return { problem: null, kept: new KeptNesting(text, lines, depths) };
  }
}

/** `list.splice(from, count, ...items)` for any number of items (a spread of a pasted file's lines would overflow the stack); in place when the count stays. */
function replaceRange(list: number[], from: number, count: number, items: readonly number[]): void {
  if (items.length === count) {
    for (let k = 0; k < count; k++) list[from + k] = items[k];
    return;
  }
  const tail = list.slice(from + count);
  list.length = from;
  for (const x of items) list.push(x);
  for (const x of tail) list.push(x);
}

/** Index of the last entry of ascending `list` that is ≤ `at`, or -1. */
function lastAtOrBefore(list: readonly number[], at: number): number {
  let lo = 0,
    hi = list.length - 1,
    best = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid] <= at) {
      best = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best;
}
