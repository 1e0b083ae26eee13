/**
 * `gpu-pilot_checkFile`: one file's findings for a coding agent, with 1-based positions
 * and each fix written out. Shared by the language server (`gpuPilot/checkFile`, the VS Code
 * language-model tool) and `gpu-pilot mcp`, so both lint with the same engine and configuration.
 * The engine must be initialised (`initEngine`) before {@link checkText} or {@link checkFileOnDisk}.
 */
import { extname, isAbsolute } from "node:path";
import { lintPython, type LintOptions } from "./engine/lint";
import { lintNotebook, readIpynb, type CellInput } from "./engine/notebook";
import { lintManifest, manifestKindOf } from "./engine/manifests/lintManifest";
import { readWorkspaceFile, SOURCE_MAX_BYTES } from "../../common/src/fs/workspaceFile";
import { decodeSource } from "./engine/sourceEncoding";
import { DEFAULT_MAX_FILE_SIZE_KB, FILE_TOO_LARGE_CODE, sizeOverLimit, sourceReadCap } from "./engine/limits";
import { escapeControls } from "../../common/src/text/controls";
import { docUrl } from "./docsUrl";
import type { Range, Severity, TextEdit } from "./engine/types";
import type { AgentEdit, AgentFinding, CheckFileResult } from "../../common/src/lsp/protocol";

const edit = (e: TextEdit & { cell?: number }): AgentEdit => ({
  line: e.range.start.line + 1,
  column: e.range.start.character + 1,
  endLine: e.range.end.line + 1,
  endColumn: e.range.end.character + 1,
  ...(e.cell !== undefined ? { cell: e.cell + 1 } : {}),
  newText: e.newText,
});

function finding(
  d: {
    code: string;
    severity: Severity;
    message: string;
    range: Range;
    fix?: { title: string; safe: boolean; edits: Array<TextEdit & { cell?: number }> };
  },
  cell?: number,
): AgentFinding {
  return {
    code: d.code,
    severity: d.severity,
    message: escapeControls(d.message),
    line: d.range.start.line + 1,
    column: d.range.start.character + 1,
    ...(cell !== undefined ? { cell: cell + 1 } : {}),
    ...(d.code === FILE_TOO_LARGE_CODE ? {} : { url: docUrl(d.code) }),
    ...(d.fix ? { fix: { title: escapeControls(d.fix.title), safe: d.fix.safe, edits: d.fix.edits.map(edit) } } : {}),
  };
}

/** The kind of file `path` is for the engine: a notebook, a manifest, else Python. */
function kindOf(path: string, languageId?: string) {
  if (extname(path).toLowerCase() === ".ipynb") return { notebook: true as const, manifest: null };
  return { notebook: false as const, manifest: manifestKindOf(path, languageId) };
}

/**
 * Lints notebook cells (already split) into agent findings. `path`: the notebook's absolute path
 * (the scripts its shell lines start are read from its folder); null when it has none.
 */
export function checkCells(cells: CellInput[], options: LintOptions, path: string | null = null): AgentFinding[] {
  return lintNotebook(cells, options, undefined, path).diagnostics.map((d) => finding(d, d.cell));
}

/**
 * Lints `text` as the file `path` would be linted (Python, a notebook's JSON, or a manifest by
 * its name / `languageId`). A notebook whose JSON cannot be read is one GPU000 finding.
 */
export function checkText(path: string, text: string, options: LintOptions, languageId?: string): AgentFinding[] {
  const kind = kindOf(path, languageId);
  if (kind.notebook) {
    let cells: CellInput[];
    let host: "colab" | "kaggle" | undefined;
    try {
      ({ cells, host } = readIpynb(text));
    } catch (e) {
      const at = { line: 0, character: 0 };
      return [
        finding({
          code: FILE_TOO_LARGE_CODE,
          severity: "warning",
          message: `GPU Pilot did not lint this notebook: cannot read notebook (${(e as Error).message}).`,
          range: { start: at, end: at },
        }),
      ];
    }
    return checkCells(cells, host ? { ...options, notebookHost: host } : options, isAbsolute(path) ? path : null);
  }
  if (kind.manifest)
    return lintManifest(text, kind.manifest, options, { file: isAbsolute(path) ? path : null }).diagnostics.map((d) =>
      finding(d),
    );
  const r = lintPython(text, options);
  r.tree?.delete();
  return r.diagnostics.map((d) => finding(d));
}

/**
 * Reads `path` from disk (decoded as the file says: PEP 263 cookie, BOM) and lints it.
 * @returns the findings, or `ok: false` with the reason in words when the path is not absolute,
 *   does not exist, is not a regular file or cannot be read. Never throws for bad input.
 */
export function checkFileOnDisk(path: string, optionsFor: (file: string) => LintOptions): CheckFileResult {
  if (!isAbsolute(path)) return { ok: false, path, error: `"${path}" is not an absolute path` };
  const kind = kindOf(path);
  const options = optionsFor(path);
  // Not read past the size limit: such a file gets GPU000 from its size alone.
  const cap = sourceReadCap(options.maxFileSizeKB, kind.notebook, SOURCE_MAX_BYTES);
  const read = readWorkspaceFile(path, { maxBytes: cap });
  if (!read.ok && read.code === "too-large" && cap < SOURCE_MAX_BYTES) {
    return {
      ok: true,
      path,
      source: "disk",
      findings: [finding(sizeOverLimit(read.size ?? cap, options.maxFileSizeKB ?? DEFAULT_MAX_FILE_SIZE_KB))],
    };
  }
  if (!read.ok) return { ok: false, path, error: `cannot read ${path}: ${read.reason}` };
  const decoded = decodeSource(read.bytes, !kind.notebook && !kind.manifest);
  return { ok: true, path, source: "disk", findings: checkText(path, decoded.text, options) };
}
