/**
 * Fix-all: applies every safe fix (with `unsafe`, the CLI's `--unsafe-fixes`, the unsafe ones too), re-linting between passes until nothing safe is left (at most
 * 10 passes), like `ruff check --fix`. Used by the CLI's `--fix` and the editor's
 * `source.fixAll.gpuPilot` code action. Applying it twice changes nothing the second time.
 */
import { lintPython, fixParsesCleanly, type LintOptions } from "./lint";
import { parsePython, syntaxErrorCount } from "./python/parser";
import { lintNotebook, type CellInput, type CellDiagnostic } from "./notebook";
import { applyEdits } from "./fixes";
import { lineStructureError } from "../../../common/src/python/lineStructure";
import type { LintDiagnostic, Position, Range, TextEdit } from "./types";

const cmp = (a: { line: number; character: number }, b: { line: number; character: number }) =>
  a.line - b.line || a.character - b.character;

/**
 * Picks non-overlapping safe fixes (and unsafe ones too when `unsafe`: `--unsafe-fixes`), first come first served; `count` is the number of diagnostics
 * they fix and `chosen` those diagnostics. Closed intervals: edits that merely touch (an insertion
 * at another edit's boundary) also conflict; the later one is left for the next pass, which sees
 * the text the first one made. The picked edits are kept sorted; being disjoint, a new edit can
 * only overlap its two neighbours, so picking is O(n log n) in the number of edits (it was O(n²)).
 * A diagnostic whose fix is exactly the edits of a fix already picked (two findings on one line, one
 * rewrite of the line) is fixed by it: counted in `count`, its edits not applied twice.
 */
export function safeEdits<
  E extends { range: Range; cell?: number; newText?: string },
  D extends { fix?: { safe: boolean; edits: E[] } } = { fix?: { safe: boolean; edits: E[] } },
>(diags: D[], unsafe = false): { edits: E[]; count: number; chosen: D[] } {
  type Span = { cell: number; start: Position; end: Position };
  const out: E[] = [];
  const chosen: D[] = [];
  const sorted: Span[] = [];
  const order = (a: Span, b: Span) => a.cell - b.cell || cmp(a.start, b.start) || cmp(a.end, b.end);
  const overlaps = (a: Span, b: Span) => a.cell === b.cell && cmp(a.start, b.end) <= 0 && cmp(b.start, a.end) <= 0;
  const indexOf = (k: Span) => {
    let lo = 0,
      hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (order(sorted[mid], k) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const conflicts = (k: Span) => {
    const i = indexOf(k);
    return (i > 0 && overlaps(sorted[i - 1], k)) || (i < sorted.length && overlaps(sorted[i], k));
  };
  const pickedKeys = new Set<string>();
  const keyOf = (edits: readonly E[]) =>
    JSON.stringify(edits.map((e) => [e.cell ?? 0, e.range.start, e.range.end, e.newText ?? null]));
  let duplicates = 0;
  for (const d of diags) {
    if (!d.fix || (!d.fix.safe && !unsafe)) continue;
    if (d.fix.edits.length && pickedKeys.has(keyOf(d.fix.edits))) {
      duplicates++;
      continue;
    }
    const spans = d.fix.edits.map((e): Span => ({ cell: e.cell ?? 0, start: e.range.start, end: e.range.end }));
    if (spans.some(conflicts)) continue;
    for (const k of spans) sorted.splice(indexOf(k), 0, k);
    pickedKeys.add(keyOf(d.fix.edits));
    out.push(...d.fix.edits);
    chosen.push(d);
  }
  return { edits: out, count: chosen.length + duplicates, chosen };
}

/**
 * Applies all safe fixes (and unsafe ones when `unsafe`) to Python text. Linear in the number of findings per pass: the lint does
 * not check each fix by re-parsing (lazy validation); the fixes picked in a pass are applied
 * together and the result is parsed once. Only when that adds a syntax error are the picked fixes
 * checked one by one (the rule every fix passes: no more syntax errors than before), and the ones
 * that pass applied. (A 40 KB file took 234 s with one re-parse per fix per pass.)
 */
export function fixAllPython(text: string, options: LintOptions, unsafe = false): { text: string; applied: number } {
  let out = text;
  let applied = 0;
  for (let pass = 0; pass < 10; pass++) {
    const r = lintPython(out, { ...options, lazyFixValidation: true });
    const base = { errors: r.tree ? r.tree.syntaxErrorCount() : 0, linesOk: lineStructureError(out) === null };
    r.tree?.delete();
    let { edits, count, chosen } = safeEdits<TextEdit, LintDiagnostic>(r.diagnostics, unsafe);
    if (!edits.length) break;
    let next = applyEdits(out, edits);
    if (!parsesWithin(next, base)) {
      const ok = r.diagnostics.filter((d) => d.fix && (d.fix.safe || unsafe) && fixParsesCleanly(out, d.fix));
      ({ edits, count, chosen } = safeEdits<TextEdit, LintDiagnostic>(ok, unsafe));
      if (!edits.length) break;
      next = applyEdits(out, edits);
      // Fixes that pass one by one may still fail together: then only the first, which passed alone.
      if (!parsesWithin(next, base))
        ({ edits, count } = safeEdits<TextEdit, LintDiagnostic>(chosen.slice(0, 1), unsafe));
      next = applyEdits(out, edits);
    }
    applied += count;
    out = next;
  }
  return { text: out, applied };
}

/** Whether `text` parses with at most `base.errors` syntax errors, and has CPython's line structure right if the text before did (`base.linesOk`). */
function parsesWithin(text: string, base: { errors: number; linesOk: boolean }): boolean {
  if (base.linesOk && lineStructureError(text) !== null) return false;
  const t = parsePython(text);
  try {
    return syntaxErrorCount(t) <= base.errors;
  } finally {
    t.delete();
  }
}

/** Applies all safe fixes (and unsafe ones when `unsafe`) to a notebook's cells; returns the new cells (same length and kinds). */
export function fixAllNotebook(
  cells: CellInput[],
  options: LintOptions,
  unsafe = false,
): { cells: CellInput[]; applied: number } {
  const out = cells.map((c) => ({ ...c }));
  let applied = 0;
  for (let pass = 0; pass < 10; pass++) {
    const r = lintNotebook(out, options);
    const { edits, count } = safeEdits<TextEdit & { cell: number }, CellDiagnostic>(r.diagnostics, unsafe);
    if (!edits.length) break;
    applied += count;
    const byCell = new Map<number, TextEdit[]>();
    for (const e of edits) byCell.set(e.cell, [...(byCell.get(e.cell) ?? []), { range: e.range, newText: e.newText }]);
    for (const [cell, es] of byCell) out[cell] = { ...out[cell], text: applyEdits(out[cell].text, es) };
  }
  return { cells: out, applied };
}
