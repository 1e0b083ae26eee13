/**
 * Input size limit (issue 9): a file over `maxFileSizeKB` (setting `gpuPilot.maxFileSizeKB`, CLI
 * `--max-file-size-kb`) is not parsed; the engine reports one information diagnostic saying why.
 * Sizes are UTF-8 bytes of the linted text (for a notebook: its code cells joined; outputs and
 * markdown do not count).
 */
import type { LintDiagnostic } from "./types";

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

/**
 * The information diagnostic for a text over the limit, or null when it may be linted.
 * @param maxFileSizeKB the limit in KB; 0 (or a negative number) means no limit; default
 *   {@link DEFAULT_MAX_FILE_SIZE_KB}.
 */
export function fileTooLarge(text: string, maxFileSizeKB: number | undefined): LintDiagnostic | null {
  const limitKB = maxFileSizeKB ?? DEFAULT_MAX_FILE_SIZE_KB;
  if (!(limitKB > 0) || !Number.isFinite(limitKB)) return null;
  const bytes = utf8BytesOver(text, limitKB * 1024);
  if (bytes === null) return null;
  const kb = (n: number) => `${Math.ceil(n).toLocaleString("en-US")} KB`;
  return {
    code: FILE_TOO_LARGE_CODE,
    name: "file-too-large",
    severity: "information",
    message: `GPU Pilot did not lint this file: its code is ${kb(bytes / 1024)}, over the ${kb(limitKB)} limit. Raise gpuPilot.maxFileSizeKB (CLI: --max-file-size-kb; 0: no limit) to lint it.`,
    range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
  };
}
