/**
 * Fix-all: applies every safe fix, re-linting between passes until nothing safe is left (at most
 * 10 passes), like `ruff check --fix`. Used by the CLI's `--fix` and the editor's
 * `source.fixAll.gpuPilot` code action. Applying it twice changes nothing the second time.
 */
import { lintPython, type LintOptions } from "./lint";
import { lintNotebook, type CellInput } from "./notebook";
import { applyEdits } from "./fixes";
import type { Range, TextEdit } from "./types";

const cmp = (a: { line: number; character: number }, b: { line: number; character: number }) => a.line - b.line || a.character - b.character;

/**
 * Picks non-overlapping safe fixes, first come first served; `count` is the number of diagnostics they
 * fix: a diagnostic whose fix is exactly the edits of a fix already picked (two findings on one line,
 * one rewrite of the line) is fixed by it and counted, without applying the edits twice.
 */
export function safeEdits<E extends { range: Range; cell?: number; newText?: string }>(diags: Array<{ fix?: { safe: boolean; edits: E[] } }>): { edits: E[]; count: number } {
  const out: E[] = [];
  let count = 0;
  // Closed intervals: edits that merely touch (an insertion at another edit's boundary) also
  // conflict; the later one is left for the next pass, which sees the text the first one made.
  const overlaps = (a: E, b: E) => (a.cell ?? 0) === (b.cell ?? 0)
    && cmp(a.range.start, b.range.end) <= 0 && cmp(b.range.start, a.range.end) <= 0;
  const same = (a: E, b: E) => (a.cell ?? 0) === (b.cell ?? 0) && a.newText === b.newText
    && cmp(a.range.start, b.range.start) === 0 && cmp(a.range.end, b.range.end) === 0;
  const picked: E[][] = [];
  for (const d of diags) {
    if (!d.fix?.safe) continue;
    const edits = d.fix.edits;
    if (edits.length && picked.some((p) => p.length === edits.length && p.every((e, i) => same(e, edits[i])))) { count++; continue; }
    if (edits.some((e) => out.some((o) => overlaps(o, e)))) continue;
    picked.push(edits);
    out.push(...d.fix.edits);
    count++;
  }
  return { edits: out, count };
}

/** Applies all safe fixes to Python text. */
export function fixAllPython(text: string, options: LintOptions): { text: string; applied: number } {
  let out = text;
  let applied = 0;
  for (let pass = 0; pass < 10; pass++) {
    const r = lintPython(out, options);
    r.tree?.delete();
    const { edits, count } = safeEdits<TextEdit>(r.diagnostics);
    if (!edits.length) break;
    applied += count;
    out = applyEdits(out, edits);
  }
  return { text: out, applied };
}

/** Applies all safe fixes to a notebook's cells; returns the new cells (same length and kinds). */
export function fixAllNotebook(cells: CellInput[], options: LintOptions): { cells: CellInput[]; applied: number } {
  const out = cells.map((c) => ({ ...c }));
  let applied = 0;
  for (let pass = 0; pass < 10; pass++) {
    const r = lintNotebook(out, options);
    const { edits, count } = safeEdits(r.diagnostics);
    if (!edits.length) break;
    applied += count;
    const byCell = new Map<number, TextEdit[]>();
    for (const e of edits) byCell.set(e.cell, [...(byCell.get(e.cell) ?? []), { range: e.range, newText: e.newText }]);
    for (const [cell, es] of byCell) out[cell] = { ...out[cell], text: applyEdits(out[cell].text, es) };
  }
  return { cells: out, applied };
}
