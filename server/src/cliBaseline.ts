/**
 * The CLI's baseline (the format and matching are engine/baseline.ts):
 * `--write-baseline FILE` writes a run's findings, `--baseline FILE` or the nearest pyproject's
 * `[tool.gpu-pilot] baseline` leaves out the findings it holds.
 */
import { existsSync } from "node:fs";
import { dirname, extname, resolve } from "node:path";
import {
  baselinePath,
  entriesOf,
  findingLines,
  loadBaseline,
  matchBaseline,
  splitLines,
  writeBaselineFile,
  BaselineError,
  type BaselineFinding,
} from "./engine/baseline";
import { cellsOfIpynb } from "./engine/notebook";
import { decodeSource } from "./engine/sourceEncoding";
import { readWorkspaceFile, SOURCE_MAX_BYTES } from "../../common/src/fs/workspaceFile";
import { manifestKindOf } from "./engine/manifests/lintManifest";
import type { JsonDiagnostic } from "./cli";

/** What the baseline did to a run: the findings still shown, how many it left out, its stale entries, what was written. */
export interface BaselineOutcome {
  shown: JsonDiagnostic[];
  baselined: number;
  stale: number;
  wrote: { path: string; entries: number } | null;
}

/** How a run finds its baseline(s) and the text its findings point into. */
export interface BaselineSetup {
  /** The baseline that applies to `file` (absolute), or null: `--baseline`, else the pyproject's. */
  baselineOf: (file: string) => string | null;
  /** `--write-baseline`'s file (absolute), or null. */
  write: string | null;
  /** The text checked for `file` (the stdin text for stdin), or null when it cannot be read. */
  textOf: (file: string) => string | null;
}

/** The text of a file on disk as the CLI decodes it (sourceEncoding.ts), or null when it cannot be read. */
export function textOnDisk(file: string): string | null {
  const r = readWorkspaceFile(file, { maxBytes: SOURCE_MAX_BYTES });
  if (!r.ok) return null;
  return decodeSource(r.bytes, extname(file) !== ".ipynb" && !manifestKindOf(file)).text;
}

/**
 * The findings as the baseline matches them: each with the lines it covers (a notebook finding in
 * its cell's text); the text of each file is read once.
 */
function findingsOf(all: readonly JsonDiagnostic[], textOf: (file: string) => string | null): BaselineFinding[] {
  const memo = new Map<string, { lines: string[]; cells: string[][] | null }>();
  const linesOf = (d: JsonDiagnostic): string[] => {
    let m = memo.get(d.filename);
    if (!m) {
      const text = textOf(d.filename) ?? "";
      let cells: string[][] | null = null;
      if (extname(d.filename) === ".ipynb") {
        try {
          cells = cellsOfIpynb(text).map((c) => splitLines(c.text));
        } catch {
          cells = null;
        }
      }
      m = { lines: splitLines(text), cells };
      memo.set(d.filename, m);
    }
    return d.cell !== null ? (m.cells?.[d.cell - 1] ?? []) : m.lines;
  };
  return all.map((d) => ({
    code: d.code,
    file: d.filename,
    lines: findingLines(linesOf(d), d.location.row - 1, d.end_location.row - 1),
  }));
}

/**
 * Applies the run's baselines: with `write`, writes every finding to that file (keeping its entries
 * of files this run did not check that still exist) and shows none; else leaves out the findings
 * each file's baseline holds.
 * @param checked the absolute paths this run checked (its stale entries are counted only among them).
 * @throws BaselineError when a baseline cannot be read, is not a valid baseline, or cannot be written.
 */
export function applyBaselines(
  all: readonly JsonDiagnostic[],
  checked: readonly string[],
  setup: BaselineSetup,
): BaselineOutcome {
  const findings = findingsOf(all, setup.textOf);
  if (setup.write) return writeRun(findings, checked, setup.write, all.length);
  const byBaseline = new Map<string, number[]>();
  findings.forEach((f, i) => {
    const b = setup.baselineOf(f.file);
    if (!b) return;
    const list = byBaseline.get(b);
    if (list) list.push(i);
    else byBaseline.set(b, [i]);
  });
  for (const f of checked) {
    const b = setup.baselineOf(f);
    if (b && !byBaseline.has(b)) byBaseline.set(b, []);
  }
  const hidden = new Set<number>();
  let stale = 0;
  for (const [path, indexes] of byBaseline) {
    const baseline = loadBaseline(path);
    const m = matchBaseline(
      baseline,
      indexes.map((i) => findings[i]),
      checked.filter((f) => setup.baselineOf(f) === path),
    );
    m.baselined.forEach((b, k) => {
      if (b) hidden.add(indexes[k]);
    });
    stale += m.stale;
  }
  return { shown: all.filter((_, i) => !hidden.has(i)), baselined: hidden.size, stale, wrote: null };
}

/** `--write-baseline`: the file holds this run's findings and the still-existing files' entries it did not check. */
function writeRun(
  findings: BaselineFinding[],
  checked: readonly string[],
  path: string,
  count: number,
): BaselineOutcome {
  const dir = dirname(path);
  const entries = entriesOf(findings, dir);
  if (existsSync(path)) {
    let old;
    try {
      old = loadBaseline(path);
    } catch (e) {
      if (!(e instanceof BaselineError)) throw e;
      old = null;
    } // an unreadable old file is replaced
    const done = new Set(checked.map((f) => baselinePath(dir, f)));
    if (old) entries.push(...old.entries.filter((e) => !done.has(e.file) && existsSync(resolve(dir, e.file))));
  }
  writeBaselineFile(path, entries);
  return { shown: [], baselined: count, stale: 0, wrote: { path, entries: entries.length } };
}

/** The summary line of a run with a baseline: "Wrote N entries to FILE; " and "N baselined, M entries no longer match". */
export function baselineSummary(o: BaselineOutcome, shownPath: (p: string) => string): string {
  const wrote = o.wrote
    ? `Wrote ${o.wrote.entries} baseline entr${o.wrote.entries === 1 ? "y" : "ies"} to ${shownPath(o.wrote.path)}; `
    : "";
  const stale = o.stale ? ` (write the baseline again to drop ${o.stale === 1 ? "it" : "them"})` : "";
  return `${wrote}${o.baselined} baselined, ${o.stale} entr${o.stale === 1 ? "y" : "ies"} no longer match${o.stale === 1 ? "es" : ""}${stale}.\n`;
}
