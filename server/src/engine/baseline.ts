/**
 * The baseline file: the findings a legacy repository accepts for now, so that a
 * run reports only new ones. `gpu-pilot check --write-baseline FILE` writes it; `--baseline FILE` or
 * `[tool.gpu-pilot] baseline = "FILE"` reads it; the language server shows baselined findings as hints.
 *
 * Ideas taken from ESLint's suppressions file (eslint-suppressions.json: per file and rule, no line
 * numbers, so edits elsewhere keep it valid; `--prune-suppressions` drops what no longer matches) and
 * basedpyright's `--baselinefile` (findings are matched by rule and file without line numbers; the
 * file shrinks as findings are fixed when it is written again). A finding is matched by its rule code,
 * its file (relative to the baseline's folder, '/' separators) and a fingerprint of the normalised
 * text of its line(s), with an occurrence index among same-code same-fingerprint findings of the file.
 *
 * Format (version 1), entries sorted by file, code, fingerprint, occurrence:
 *   { "version": 1, "entries": [ { "file": "src/train.py", "code": "GPU001", "fingerprint": "0f3a9c1e2b4d5a6f", "occurrence": 0 } ] }
 * Node's fs only (through workspaceFile.ts); no `vscode`.
 */
import { createHash, randomBytes } from "node:crypto";
import { closeSync, constants, openSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { fileKind, readWorkspaceFile } from "../../../common/src/fs/workspaceFile";

/** The format version written and the only one read. */
export const BASELINE_VERSION = 1;

/** The largest baseline file read: 64 MiB (about 600,000 entries of ~100 bytes). */
export const BASELINE_MAX_BYTES = 64 * 1024 * 1024;

/** How many lines of a finding (from its first) the fingerprint covers. */
export const FINGERPRINT_LINES = 3;

/** One accepted finding. `file`: relative to the baseline file's folder, '/' separators. */
export interface BaselineEntry {
  file: string;
  code: string;
  fingerprint: string;
  occurrence: number;
}

/** A baseline read from disk: its entries and the folder its paths are relative to. */
export interface Baseline {
  path: string;
  dir: string;
  entries: BaselineEntry[];
  keys: Set<string>;
}

/** A finding to match: its rule, its file (absolute) and the text of its lines (already cut to the finding's rows). */
export interface BaselineFinding {
  code: string;
  file: string;
  lines: readonly string[];
}

/** Thrown when a baseline file cannot be read or is not a valid baseline; the message says why. */
export class BaselineError extends Error {}

const keyOf = (e: BaselineEntry): string => `${e.file}\u0000${e.code}\u0000${e.fingerprint}\u0000${e.occurrence}`;

/**
 * The fingerprint of a finding's text: the first 16 hex digits of the SHA-256 of its lines, each
 * trimmed and with runs of white space made one space, joined with "\n". Indentation and spacing
 * changes keep it; a change to the code on the line does not.
 * @param lines the finding's lines (at most {@link FINGERPRINT_LINES} are used).
 */
export function fingerprintOf(lines: readonly string[]): string {
  const norm = lines
    .slice(0, FINGERPRINT_LINES)
    .map((l) => l.trim().replace(/\s+/g, " "))
    .join("\n");
  return createHash("sha256").update(norm).digest("hex").slice(0, 16);
}

/** The lines of a text (any line ending), for {@link findingLines}. */
export const splitLines = (text: string): string[] => text.split(/\r\n|\r|\n/);

/**
 * The lines a finding covers, for {@link fingerprintOf}: 0-based rows `startRow` to `endRow` of
 * `lines` ({@link splitLines}), at most {@link FINGERPRINT_LINES}; rows past the end give "".
 */
export function findingLines(lines: readonly string[], startRow: number, endRow: number): string[] {
  const out: string[] = [];
  for (let r = startRow; r <= Math.min(endRow, startRow + FINGERPRINT_LINES - 1); r++) out.push(lines[r] ?? "");
  return out;
}

/** `file` relative to `dir` with '/' separators (as entries hold it). */
export function baselinePath(dir: string, file: string): string {
  return relative(dir, file).split(sep).join("/");
}

/**
 * The entries for `findings` (in the order a run reports them: the occurrence index counts
 * same-file, same-code, same-fingerprint findings in that order), relative to `dir`; sorted.
 */
export function entriesOf(findings: readonly BaselineFinding[], dir: string): BaselineEntry[] {
  const seen = new Map<string, number>();
  const out = findings.map((f) => {
    const base = { file: baselinePath(dir, f.file), code: f.code, fingerprint: fingerprintOf(f.lines) };
    const k = keyOf({ ...base, occurrence: 0 });
    const occurrence = seen.get(k) ?? 0;
    seen.set(k, occurrence + 1);
    return { ...base, occurrence };
  });
  return sortEntries(out);
}

const cmp = (a: string | number, b: string | number): number => (a < b ? -1 : a > b ? 1 : 0);

/** Entries in the file's order: by file, code, fingerprint, occurrence (stable diffs between writes). */
export function sortEntries(entries: BaselineEntry[]): BaselineEntry[] {
  return entries.sort(
    (a, b) =>
      cmp(a.file, b.file) ||
      cmp(a.code, b.code) ||
      cmp(a.fingerprint, b.fingerprint) ||
      cmp(a.occurrence, b.occurrence),
  );
}

/** The text of a baseline file holding `entries` (sorted here), one entry a line, ending in a newline. */
export function serialiseBaseline(entries: BaselineEntry[]): string {
  const rows = sortEntries([...entries]).map(
    (e) =>
      `    ${JSON.stringify({ file: e.file, code: e.code, fingerprint: e.fingerprint, occurrence: e.occurrence })}`,
  );
  return `{\n  "version": ${BASELINE_VERSION},\n  "entries": [${rows.length ? `\n${rows.join(",\n")}\n  ` : ""}]\n}\n`;
}

const CODE = /^GPU\d{3}$/;
const FINGERPRINT = /^[0-9a-f]{16}$/;

/** Why `e` is not a valid entry, or null. */
function entryProblem(e: unknown): string | null {
  if (typeof e !== "object" || e === null || Array.isArray(e)) return "not an object";
  const o = e as Record<string, unknown>;
  if (
    typeof o.file !== "string" ||
    o.file === "" ||
    o.file.length > 4096 ||
    isAbsolute(o.file) ||
    // eslint-disable-next-line no-control-regex -- refusing control characters is the point
    /[\u0000-\u001f\\]/.test(o.file)
  )
    return "\"file\" must be a relative path with '/' separators";
  if (typeof o.code !== "string" || !CODE.test(o.code)) return '"code" must be a rule code such as GPU001';
  if (typeof o.fingerprint !== "string" || !FINGERPRINT.test(o.fingerprint))
    return '"fingerprint" must be 16 hex digits';
  if (typeof o.occurrence !== "number" || !Number.isInteger(o.occurrence) || o.occurrence < 0 || o.occurrence > 1e6)
    return '"occurrence" must be a whole number from 0 to 1000000';
  return null;
}

/**
 * Parses a baseline file's text.
 * @param path the file (for messages and the folder entries are relative to).
 * @throws BaselineError when it is not JSON, not version {@link BASELINE_VERSION}, or an entry is malformed
 *   (the message names the first bad entry).
 */
export function parseBaseline(text: string, path: string): Baseline {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new BaselineError(`baseline ${path} is not valid JSON (${(e as Error).message.slice(0, 200)})`);
  }
  const o = data as { version?: unknown; entries?: unknown };
  if (typeof data !== "object" || data === null || Array.isArray(data))
    throw new BaselineError(`baseline ${path} must be a JSON object with "version" and "entries"`);
  if (o.version !== BASELINE_VERSION)
    throw new BaselineError(
      `baseline ${path} has version ${JSON.stringify(o.version)?.slice(0, 40)}; this gpu-pilot reads version ${BASELINE_VERSION} (write it again with --write-baseline)`,
    );
  if (!Array.isArray(o.entries)) throw new BaselineError(`baseline ${path} must have an "entries" array`);
  for (let i = 0; i < o.entries.length; i++) {
    const p = entryProblem(o.entries[i]);
    if (p) throw new BaselineError(`baseline ${path}: entry ${i + 1} of ${o.entries.length}: ${p}`);
  }
  const entries = (o.entries as BaselineEntry[]).map((e) => ({
    file: e.file,
    code: e.code,
    fingerprint: e.fingerprint,
    occurrence: e.occurrence,
  }));
  return { path, dir: dirname(resolve(path)), entries, keys: new Set(entries.map(keyOf)) };
}

/**
 * Reads a baseline file through workspaceFile.ts (a regular file of at most {@link BASELINE_MAX_BYTES};
 * a FIFO or device is refused without blocking).
 * @throws BaselineError when it cannot be read or parsed (see {@link parseBaseline}).
 */
export function loadBaseline(path: string): Baseline {
  const r = readWorkspaceFile(path, { maxBytes: BASELINE_MAX_BYTES });
  if (!r.ok) throw new BaselineError(`cannot read baseline ${path}: ${r.reason}`);
  const text = r.bytes.toString("utf8");
  return parseBaseline(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, path);
}

/**
 * Matches a run's findings against a baseline.
 * @param findings in the order reported (the occurrence index depends on it: {@link entriesOf}).
 * @param checkedFiles the absolute paths this run checked: entries of other files are not counted
 *   as stale (a pre-commit run checks only the staged files).
 * @returns per finding whether the baseline holds it, and how many entries of the checked files
 *   matched no finding (`stale`: fixed, or their lines changed).
 */
export function matchBaseline(
  baseline: Baseline,
  findings: readonly BaselineFinding[],
  checkedFiles: Iterable<string>,
): { baselined: boolean[]; stale: number } {
  const seen = new Map<string, number>();
  const used = new Set<string>();
  const baselined = findings.map((f) => {
    const base = { file: baselinePath(baseline.dir, f.file), code: f.code, fingerprint: fingerprintOf(f.lines) };
    const k0 = keyOf({ ...base, occurrence: 0 });
    const occurrence = seen.get(k0) ?? 0;
    seen.set(k0, occurrence + 1);
    const k = keyOf({ ...base, occurrence });
    if (!baseline.keys.has(k)) return false;
    used.add(k);
    return true;
  });
  const checked = new Set<string>();
  for (const f of checkedFiles) checked.add(baselinePath(baseline.dir, f));
  const stale = baseline.entries.filter((e) => checked.has(e.file) && !used.has(keyOf(e))).length;
  return { baselined, stale };
}

/**
 * Writes a baseline file holding `entries` ({@link serialiseBaseline}): through a temp file in the
 * same folder renamed over it, so a reader never sees half a file. A path that exists and is not a
 * regular file (a FIFO, a folder, a device) is refused: writing to it could block or do harm.
 * @throws BaselineError when the path is not a regular file or the write fails (the message says why).
 */
export function writeBaselineFile(path: string, entries: BaselineEntry[]): void {
  try {
    const st = statSync(path);
    if (!st.isFile())
      throw new BaselineError(`cannot write baseline ${path}: it is ${fileKind(st)}, not a regular file`);
  } catch (e) {
    if (e instanceof BaselineError) throw e;
    if ((e as NodeJS.ErrnoException).code !== "ENOENT")
      throw new BaselineError(
        `cannot write baseline ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
  }
  const tmp = join(dirname(path), `.${basename(path)}.gpu-pilot-${process.pid}-${randomBytes(4).toString("hex")}.tmp`);
  const bytes = Buffer.from(serialiseBaseline(entries), "utf8");
  try {
    const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644);
    try {
      for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      /* never created */
    }
    throw new BaselineError(
      `cannot write baseline ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
}
