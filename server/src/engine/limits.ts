/**
 * Input size limit: a file over `maxFileSizeKB` (setting `gpuPilot.maxFileSizeKB`, CLI
 * `--max-file-size-kb`) is not parsed; the engine reports one information diagnostic saying why.
 * Sizes are UTF-8 bytes of the linted text (for a notebook: its code cells joined; outputs and
 * markdown do not count).
 */
import type { LintDiagnostic } from "./types";
import { isWordCode } from "../../../common/src/python/lineStructure";

/** Default limit in KB (1 KB = 1024 bytes). */
export const DEFAULT_MAX_FILE_SIZE_KB = 2048;

/** The code of the "file not linted" diagnostic; not a rule (it cannot be selected, ignored or noqa'd). */
export const FILE_TOO_LARGE_CODE = "GPU000";

/** UTF-8 size of `text` in bytes, computed only when `text` may be over `limitBytes`. */
function utf8BytesOver(text: string, limitBytes: number): number | null {
  if (text.length * 3 <= limitBytes) return null; // a UTF-16 code unit is at most 3 UTF-8 bytes
  const bytes = Buffer.byteLength(text, "utf8");
  return bytes > limitBytes ? bytes : null;
}

/** Deepest nesting the parser is given: Python itself allows 200 nested brackets. */
export const MAX_NESTING = 256;

const CHAIN_WORDS = new Set(["not", "lambda", "if", "await"]);

/**
 * Why tree-sitter's wasm parser cannot take `text` safely, or null. Around 1,000 levels of
 * right-nested syntax next to a syntax error (`[[[...` 2,500 deep, `not not ...`, `a if b else a
 * if b else ...`, `-----x`) overflow its C stack: the wasm traps ("memory access out of bounds")
 * and every later parse in the process fails too. A cheap, conservative scan (no parse): bracket
 * depth anywhere (strings and comments included), and per line the number of `not` / `lambda` /
 * `if` / `await` words and the longest run of unary operators. Real code stays far below.
 */
export function nestingProblem(text: string): string | null {
  // The same answer as scanNesting(text, 0, 0), faster (the scan runs on every file,
  // parsed or not): the brackets are found by a regular expression, and only a line longer than
  // MAX_NESTING characters can hold more than MAX_NESTING unary operators or nesting words (lines
  // cut at `\n` only: a `\r` only splits a line further). Of the problems found, the first in the
  // text is the one the scan meets first.
  let first = -1;
  let problem: string | null = null;
  BRACKET.lastIndex = 0;
  let depth = 0;
  // `test`, not `exec`: no match array per bracket (a file has thousands); the bracket found is the
  // character before `lastIndex` (python3-torch's 1,141 files: 49 -> 19 ms on a cold start).
  while (BRACKET.test(text)) {
    const at = BRACKET.lastIndex - 1;
    const c = text.charCodeAt(at);
    if (c === 40 || c === 91 || c === 123) {
      // ( [ {
      if (++depth > MAX_NESTING) {
        first = at;
        problem = `its brackets nest more than ${MAX_NESTING} deep (Python allows 200)`;
        break;
      }
    } else if (depth > 0) depth--;
  }
  for (let start = 0; start < text.length && (first < 0 || start < first);) {
    // The lines that end within MAX_NESTING characters of `start` are too short: skipped at once,
    // up to the last `\n` there (one search per MAX_NESTING characters, not one per line).
    const last = text.lastIndexOf("\n", start + MAX_NESTING);
    if (last >= start) {
      start = last + 1;
      continue;
    }
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    if (end - start > MAX_NESTING) {
      const chain = chainProblem(text, start, end);
      if (chain && (first < 0 || chain.at < first)) return chain.problem;
    }
    start = end + 1;
  }
  return problem;
}

/** The characters scanNesting counts the depth of: ( [ { ) ] }. */
const BRACKET = /[()[\]{}]/g;

/**
 * The unary-operator and nesting-word half of {@link scanNesting} on the characters `from`..`end`
 * (`from` a line start, `end` the line's `\n` or the text's end): the first problem and its offset, or null.
 */
function chainProblem(text: string, from: number, end: number): { at: number; problem: string } | null {
  let words = 0;
  let unary = 0;
  for (let i = from; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 40 || c === 91 || c === 123 || c === 41 || c === 93 || c === 125) unary = 0;
    else if (c === 13) {
      words = 0;
      unary = 0;
    } else if (c === 45 || c === 43 || c === 126) {
      // - + ~
      if (++unary > MAX_NESTING) return { at: i, problem: `a line chains more than ${MAX_NESTING} unary operators` };
    } else if (c !== 32 && c !== 9) {
      unary = 0;
      if (isWordCode(c) && (i === 0 || !isWordCode(text.charCodeAt(i - 1)))) {
        let j = i + 1;
        while (j < text.length && isWordCode(text.charCodeAt(j))) j++;
        if (
          j - i >= 2 &&
          j - i <= 6 &&
          (c === 110 || c === 108 || c === 105 || c === 97) &&
          CHAIN_WORDS.has(text.slice(i, j)) &&
          ++words > MAX_NESTING
        )
          return { at: i, problem: `a line has more than ${MAX_NESTING} nesting keywords (not, lambda, if, await)` };
        i = j - 1;
      }
    }
  }
  return null;
}

/**
 * {@link nestingProblem}'s scan of `text` from `from`, a line start (0 or just after a `\n`),
 * with bracket depth `depth` there (what the scan from 0 had reached; the per-line counts start
 * at 0 on each line). `atLine(offset, depth)` is called after each `\n` with the offset after it
 * and the depth there; when it returns true the scan stops (null: the caller knows the rest).
 * Used by python/keptNesting.ts to scan only what an edit changed.
 */
export function scanNesting(
  text: string,
  from: number,
  depth: number,
  atLine?: (offset: number, depth: number) => boolean,
): string | null {
  let words = 0;
  let unary = 0;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 40 || c === 91 || c === 123) {
      // ( [ {
      unary = 0;
      if (++depth > MAX_NESTING) return `its brackets nest more than ${MAX_NESTING} deep (Python allows 200)`;
    } else if (c === 41 || c === 93 || c === 125) {
      // ) ] }
      unary = 0;
      if (depth > 0) depth--;
    } else if (c === 10 || c === 13) {
      words = 0;
      unary = 0;
      if (c === 10 && atLine && atLine(i + 1, depth)) return null;
    } else if (c === 45 || c === 43 || c === 126) {
      // - + ~
      if (++unary > MAX_NESTING) return `a line chains more than ${MAX_NESTING} unary operators`;
    } else if (c !== 32 && c !== 9) {
      unary = 0;
      if (isWordCode(c) && (i === 0 || !isWordCode(text.charCodeAt(i - 1)))) {
        let j = i + 1;
        while (j < text.length && isWordCode(text.charCodeAt(j))) j++;
        // Only a word of 2-6 characters starting n, l, i or a can be one of them: no slice otherwise.
        if (
          j - i >= 2 &&
          j - i <= 6 &&
          (c === 110 || c === 108 || c === 105 || c === 97) &&
          CHAIN_WORDS.has(text.slice(i, j)) &&
          ++words > MAX_NESTING
        )
          return `a line has more than ${MAX_NESTING} nesting keywords (not, lambda, if, await)`;
        i = j - 1;
      }
    }
  }
  return null;
}

/**
 * The information diagnostic for a text over the limit (or nested too deep for the parser:
 * {@link nestingProblem}), or null when it may be linted.
 * @param maxFileSizeKB the limit in KB; 0 (or a negative number) means no limit; default
 *   {@link DEFAULT_MAX_FILE_SIZE_KB}.
 */
export function fileTooLarge(text: string, maxFileSizeKB: number | undefined): LintDiagnostic | null {
  const over = fileOverSizeLimit(text, maxFileSizeKB);
  if (over) return over;
  const deep = nestingProblem(text);
  return deep === null ? null : nestingDiagnostic(deep);
}

/** The GPU000 diagnostic for a text its parser cannot take, `problem` as {@link nestingProblem} words it. */
export function nestingDiagnostic(problem: string): LintDiagnostic {
  return {
    code: FILE_TOO_LARGE_CODE,
    name: "file-too-large",
    severity: "information",
    range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
    message: `GPU Pilot did not lint this file: ${problem}, more than its parser can take safely.`,
  };
}

/**
 * The size half of {@link fileTooLarge}: the GPU000 diagnostic for a text over the limit, or null.
 * Used for manifests too (a 600 KB Kubernetes YAML ran past 280 s with no limit).
 */
export function fileOverSizeLimit(text: string, maxFileSizeKB: number | undefined): LintDiagnostic | null {
  const limitKB = maxFileSizeKB ?? DEFAULT_MAX_FILE_SIZE_KB;
  const bytes = limitKB > 0 && Number.isFinite(limitKB) ? utf8BytesOver(text, limitKB * 1024) : null;
  return bytes === null ? null : sizeOverLimit(bytes, limitKB);
}

/** The GPU000 diagnostic for code of `bytes` bytes over a limit of `limitKB` KB. */
export function sizeOverLimit(bytes: number, limitKB: number): LintDiagnostic {
  const kb = (n: number) => `${Math.ceil(n).toLocaleString("en-US")} KB`;
  return {
    code: FILE_TOO_LARGE_CODE,
    name: "file-too-large",
    severity: "information",
    message: `GPU Pilot did not lint this file: its code is ${kb(bytes / 1024)}, over the ${kb(limitKB)} limit. Raise gpuPilot.maxFileSizeKB (CLI: --max-file-size-kb; 0: no limit) to lint it.`,
    range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
  };
}

/**
 * Most bytes worth reading of a source file before linting it (a 256 MiB file was
 * read whole before the 2 MB limit applied): the size limit plus a BOM's 3 bytes for a Python
 * file or manifest, whose code is all of it (decoded text is never shorter in UTF-8 than its
 * bytes, a BOM aside); `fallback` for a notebook (its outputs do not count) or with no limit.
 */
export function sourceReadCap(maxFileSizeKB: number | undefined, notebook: boolean, fallback: number): number {
  const limitKB = maxFileSizeKB ?? DEFAULT_MAX_FILE_SIZE_KB;
  if (notebook || !(limitKB > 0) || !Number.isFinite(limitKB)) return fallback;
  return Math.min(fallback, Math.ceil(limitKB * 1024) + 3);
}
