/**
 * The baseline in the editor: when the document's pyproject.toml names one
 * (`[tool.gpu-pilot] baseline`), the findings it holds are published as hints with " (baselined)"
 * after the message, matched as the CLI matches them (engine/baseline.ts).
 */
import { statSync } from "node:fs";
import { DiagnosticSeverity, type Diagnostic } from "vscode-languageserver/node";
import { BaselineError, findingLines, loadBaseline, matchBaseline, splitLines, type Baseline } from "./engine/baseline";

/** The suffix of a baselined finding's message. */
export const BASELINED_SUFFIX = " (baselined)";

/**
 * Baseline files read by the server, each kept until its size, mtime or inode changes (checked with
 * one stat a lint). A file that cannot be read or is not a valid baseline gives null and one
 * `warn` per version of the file.
 */
export class BaselineFiles {
  private readonly kept = new Map<string, { stamp: string; baseline: Baseline | null }>();
  constructor(private readonly warn: (message: string) => void) {}

  /** The baseline at `path` (absolute), or null when it cannot be used (warned once). */
  get(path: string): Baseline | null {
    let stamp: string;
    try {
      const st = statSync(path);
      stamp = `${st.size}:${st.mtimeMs}:${st.ino}`;
    } catch {
      stamp = "missing";
    }
    const hit = this.kept.get(path);
    if (hit && hit.stamp === stamp) return hit.baseline;
    let baseline: Baseline | null = null;
    try {
      baseline = loadBaseline(path);
    } catch (e) {
      if (!(e instanceof BaselineError)) throw e;
      this.warn(`GPU Pilot: ${e.message}; findings are shown as usual`);
    }
    this.kept.set(path, { stamp, baseline });
    return baseline;
  }

  /** Forgets every file (a watched file changed, or settings did). */
  clear(): void {
    this.kept.clear();
  }
}

/** A finding as the editor lints it: code, 0-based range, and (notebooks) its cell index. */
export interface EditorFinding {
  code: string;
  range: { start: { line: number }; end: { line: number } };
  cell?: number;
}

/**
 * Which of a document's findings `baseline` holds.
 * @param file the document's path (absolute).
 * @param texts the text of the document, or of each notebook cell (indexed by `cell`).
 */
export function baselinedIn(
  baseline: Baseline,
  file: string,
  findings: readonly EditorFinding[],
  texts: readonly string[],
): boolean[] {
  const lines = texts.map(splitLines);
  const asFindings = findings.map((d) => ({
    code: d.code,
    file,
    lines: findingLines(lines[d.cell ?? 0] ?? [], d.range.start.line, d.range.end.line),
  }));
  return matchBaseline(baseline, asFindings, []).baselined;
}

/** `d` as a baselined finding: severity Hint, " (baselined)" after the message. */
export function asBaselined(d: Diagnostic): Diagnostic {
  return { ...d, severity: DiagnosticSeverity.Hint, message: d.message + BASELINED_SUFFIX };
}
