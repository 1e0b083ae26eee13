/**
 * Where the Run CodeLens goes: the `if __name__ == "__main__":` line, found by a line scan (no
 * parse: the client bundles no parser, and VS Code asks for the lens on every edit in the extension
 * host). What the run checks need about a script comes from the language server instead
 * (`gpuPilot/runFacts`, server/src/engine/runFacts.ts).
 */
import { logicalLines } from "../../../common/src/python/lineStructure";

/** Texts longer than this (UTF-16 code units, 2 Mi: `gpuPilot.maxFileSizeKB`'s default) get no CodeLens. */
export const MAIN_GUARD_MAX_CHARS = 2 * 1024 * 1024;

/** `if __name__ == "__main__":` (either side, either quote, optional parentheses) at the start of a logical line. */
const MAIN_GUARD =
  /^if[ \t]*\(?[ \t]*(?:__name__[ \t]*==[ \t]*(["'])__main__\1|(["'])__main__\2[ \t]*==[ \t]*__name__)[ \t]*\)?[ \t]*:/;

/**
 * The 0-based line of the first module-level `if __name__ == "__main__":` in `text`, or undefined;
 * for the CodeLens, which VS Code asks for on every edit in the extension host. No parse (it
 * parsed the whole file there, with no size limit): a line scan over the logical lines
 * at column 0 (common/src/python/lineStructure.ts skips lines inside strings and brackets and
 * continued lines), and nothing for a text over {@link MAIN_GUARD_MAX_CHARS}. Linear in the text.
 */
export function mainGuardLine(text: string): number | undefined {
  if (text.length > MAIN_GUARD_MAX_CHARS) return undefined;
  let found: number | undefined;
  logicalLines(text, (line, offset, col) => {
    if (found !== undefined || col !== 0 || text.charCodeAt(offset) !== 105 /* i */) return;
    const end = text.indexOf("\n", offset);
    if (MAIN_GUARD.test(text.slice(offset, end < 0 ? text.length : end))) found = line;
  });
  return found;
}
