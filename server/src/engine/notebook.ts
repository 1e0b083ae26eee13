/**
 * Jupyter notebooks as one program: code cells joined in order (the kernel keeps its state from
 * cell to cell), IPython lines (`%env`, `!export`, other magics) blanked before parsing and kept as
 * timeline events, and diagnostics mapped back to cells.
 */
import type { LintDiagnostic, Range, TextEdit } from "./types";
import type { ModuleModel } from "./python/model";
import { magicEvents, type MagicLine } from "./python/events";
import { lintManifest } from "./manifests/lintManifest";
import { fixedTextParsesCleanly, isRuleOn, lintPython, type LintOptions, type RuleFailure } from "./lint";
import { REPLAYED_RULES, rule as GPU050 } from "./rules/GPU050-notebook-cell-ran-after-init";
import { applyEdits, lineStarts, eolOf } from "./fixes";
import { pythonInput } from "./python/parser";
import type { DocumentAnalysis } from "./analysis";
import { parseTree, type Node as JsonNode } from "jsonc-parser";

/** One cell as given by the caller. */
export interface CellInput {
  kind: "code" | "markup";
  /** The cell's source text. */
  text: string;
  /**
   * The cell's saved execution count (nbformat `execution_count`: the kernel's `In [n]`), when the
   * notebook was saved after the cell ran; absent or null when it did not run (GPU050).
   */
  executionCount?: number | null;
}

/** A diagnostic inside one cell. Positions are relative to the cell. */
export interface CellDiagnostic extends Omit<LintDiagnostic, "fix" | "related"> {
  /** 0-based index of the cell among all cells of the notebook. */
  cell: number;
  related?: Array<{ cell: number; range: Range; message: string }>;
  fix?: { title: string; safe: boolean; note?: string; edits: Array<TextEdit & { cell: number }> };
}

/** Reads the cells of an .ipynb file (nbformat 4; `source` as a string or a list of lines). */
export function cellsOfIpynb(json: string): CellInput[] {
  return readIpynb(json).cells;
}

/**
 * Where a notebook says it runs, from its metadata: `"colab"` when it carries Google Colab's
 * `colab` key (Colab writes it into every notebook it saves), `"kaggle"` when it carries Kaggle's
 * `kaggle` key (Kaggle's saved notebooks: accelerator, data sources), else undefined. Takes the .ipynb's
 * top-level `metadata` object, or a VS Code notebook document's metadata, which holds it under
 * `metadata` (or `custom.metadata` in older VS Code).
 */
export function notebookHostOf(metadata: unknown): "colab" | "kaggle" | undefined {
  const obj = (v: unknown): Record<string, unknown> | undefined =>
    v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  const m = obj(metadata);
  if (!m) return undefined;
  for (const candidate of [m, obj(m.metadata), obj(obj(m.custom)?.metadata)]) {
    if (candidate && Object.prototype.hasOwnProperty.call(candidate, "colab")) return "colab";
    if (candidate && Object.prototype.hasOwnProperty.call(candidate, "kaggle")) return "kaggle";
  }
  return undefined;
}

/**
 * Reads an .ipynb file: its cells (as {@link cellsOfIpynb}) and where its metadata says it runs
 * ({@link notebookHostOf}). Throws on text that is not JSON or has no `cells` array.
 */
export function readIpynb(json: string): { cells: CellInput[]; host?: "colab" | "kaggle" } {
  const nb = JSON.parse(json) as {
    cells?: Array<{ cell_type?: string; source?: string | string[]; execution_count?: unknown }>;
    metadata?: unknown;
  };
  if (!nb || !Array.isArray(nb.cells)) throw new Error('not a Jupyter notebook: no "cells" array');
  const host = notebookHostOf(nb.metadata);
  return { cells: cellsOf(nb.cells), ...(host ? { host } : {}) };
}

function cellsOf(
  cells: Array<{ cell_type?: string; source?: string | string[]; execution_count?: unknown }>,
): CellInput[] {
  return cells.map((c) => ({
    kind: c.cell_type === "code" ? "code" : "markup",
    text: Array.isArray(c.source) ? c.source.join("") : typeof c.source === "string" ? c.source : "",
    ...(c.cell_type === "code" && Number.isSafeInteger(c.execution_count) && (c.execution_count as number) > 0
      ? { executionCount: c.execution_count as number }
      : {}),
  }));
}

/** The value of the last property `key` of a JSON object node (JSON.parse keeps the last one), or undefined. */
function lastProperty(obj: JsonNode | undefined, key: string): JsonNode | undefined {
  if (obj?.type !== "object") return undefined;
  let found: JsonNode | undefined;
  for (const p of obj.children ?? []) if (p.children?.[0]?.value === key) found = p.children[1];
  return found;
}

/**
 * The .ipynb text with new cell sources, written into the original text (a rewritten notebook must
 * not lose or reformat what it did not change): only the `source` values of cells whose text
 * changed are edited, every other byte stays
 * (big integers, `1.0`, key order, line ends, indentation, `\u00e9` escapes). A source that was a
 * string stays a string; a list of lines stays a list, and only the lines that changed are
 * rewritten (the unchanged leading and trailing lines keep their original text).
 * @param texts the new text of every cell, in order (as many as `cellsOfIpynb(json)` gives).
 * @throws Error when `json` is not a notebook (as {@link cellsOfIpynb}).
 */
export function withCellSources(json: string, texts: string[]): string {
  const old = cellsOfIpynb(json);
  const root = parseTree(json);
  const cells = lastProperty(root, "cells")?.children ?? [];
  const eol = eolOf(json);
  const splices: Array<{ at: number; end: number; text: string }> = [];
  const between = (a: JsonNode, b: JsonNode) => json.slice(a.offset + a.length, b.offset);
  /** A separator between list elements: from this list, another cell's list, or the layout. */
  const separatorFor = (arr: JsonNode): string => {
    for (const list of [arr, ...cells.map((c) => lastProperty(c, "source"))]) {
      const el = list?.type === "array" ? (list.children ?? []) : [];
      if (el.length >= 2) return between(el[0], el[1]);
    }
    const first = arr.children?.[0];
    const at = first ? first.offset : arr.offset;
    const lineStart = json.lastIndexOf("\n", at - 1) + 1;
    return `,${eol}${/^[ \t]*/.exec(json.slice(lineStart))![0]}`;
  };
  texts.forEach((text, i) => {
    if (i >= old.length || text === old[i].text) return;
    const node = lastProperty(cells[i], "source");
    if (!node) throw new Error(`cell ${i + 1} has no source to fix`);
    const elements = node.type === "array" ? (node.children ?? []) : [];
    if (node.type !== "array" || elements.some((e) => e.type !== "string")) {
      splices.push({ at: node.offset, end: node.offset + node.length, text: JSON.stringify(text) });
      return;
    }
    const values = elements.map((e) => e.value as string);
    let pre = 0;
    let from = 0;
    while (pre < values.length && values[pre].endsWith("\n") && text.startsWith(values[pre], from))
      from += values[pre++].length;
    let post = 0;
    let to = text.length;
    while (pre + post < values.length) {
      const v = values[values.length - 1 - post];
      if (to - v.length < from || !text.endsWith(v, to)) break;
      to -= v.length;
      post++;
    }
    // Every element but the last ends with a line break: the middle must too when lines follow it.
    while (post > 0 && to > from && text[to - 1] !== "\n") to += values[values.length - post--].length;
    const middle = text.slice(from, to);
    const lines = middle === "" ? [] : middle.split(/(?<=\n)/).map((l) => JSON.stringify(l));
    const sep = separatorFor(node);
    const oldMid = elements.slice(pre, elements.length - post);
    if (oldMid.length > 0 && lines.length > 0) {
      splices.push({
        at: oldMid[0].offset,
        end: oldMid[oldMid.length - 1].offset + oldMid[oldMid.length - 1].length,
        text: lines.join(sep),
      });
    } else if (oldMid.length > 0) {
      const last = oldMid[oldMid.length - 1];
      if (pre > 0)
        splices.push({
          at: elements[pre - 1].offset + elements[pre - 1].length,
          end: last.offset + last.length,
          text: "",
        });
      else if (post > 0) splices.push({ at: oldMid[0].offset, end: elements[elements.length - post].offset, text: "" });
      else splices.push({ at: node.offset, end: node.offset + node.length, text: "[]" });
    } else if (lines.length > 0) {
      if (pre > 0) {
        const e = elements[pre - 1];
        splices.push({ at: e.offset + e.length, end: e.offset + e.length, text: sep + lines.join(sep) });
      } else if (post > 0) {
        const e = elements[elements.length - post];
        splices.push({ at: e.offset, end: e.offset, text: lines.join(sep) + sep });
      } else splices.push({ at: node.offset, end: node.offset + node.length, text: `[${lines.join(", ")}]` });
    }
  });
  splices.sort((a, b) => b.at - a.at);
  let out = json;
  for (const s of splices) out = out.slice(0, s.at) + s.text + out.slice(s.end);
  return out;
}

/**
 * Blanks IPython lines (keeping line and column numbers) and returns them as magic lines. Lines end
 * at \n, \r\n or a lone \r, as in LSP.
 */
export function blankMagics(cellText: string, lineOffset: number): { text: string; magics: MagicLine[] } {
  const parts = cellText.split(/(\r\n|\r|\n)/); // even indices: lines; odd: their line breaks
  const magics: MagicLine[] = [];
  const cellMagic = parts[0].trimStart().startsWith("%%");
  for (let k = 0; k < parts.length; k += 2) {
    const line = parts[k];
    const trimmed = line.trimStart();
    const column = line.length - trimmed.length;
    if (cellMagic) parts[k] = " ".repeat(line.length);
    else if (trimmed.startsWith("%") || trimmed.startsWith("!")) {
      const magic: MagicLine = { line: lineOffset + k / 2, column, text: trimmed };
      parts[k] = " ".repeat(line.length);
      // IPython continues the line over the next ones while each ends in `\` (MagicLine.continuation).
      for (let last = line; last.endsWith("\\") && k + 2 < parts.length;) {
        k += 2;
        last = parts[k];
        (magic.continuation ??= []).push(last);
        parts[k] = " ".repeat(last.length);
      }
      magics.push(magic);
    }
  }
  return { text: parts.join(""), magics };
}

/** A code cell's text as it is joined (IPython lines blanked, lone `\r` as `\n`), its IPython lines (lines counted in the cell) and its line count. */
export interface JoinedCell {
  text: string;
  magics: MagicLine[];
  lines: number;
}

function joinCell(text: string): JoinedCell {
  const blank = blankMagics(text, 0);
  // A cell ending in a lone \r would merge with the joining \n into one \r\n: use \n (same length).
  return {
    text: blank.text.includes("\r") ? blank.text.replace(/\r(?!\n)/g, "\n") : blank.text,
    magics: blank.magics,
    lines: lineStarts(text).length,
  };
}

/**
 * The code cells of a notebook as one Python text: joined with `\n`, IPython lines blanked
 * ({@link blankMagics}) and returned as `magics`; `starts` gives each code cell's index, first
 * line in the joined text and line count (0-based lines). `reuse`: the `joinedCells` of an
 * earlier call, whose cells of the same text are not blanked again (a notebook's analysis keeps
 * them from one lint to the next, analysis.ts `DocumentAnalysis.cells`: the editor changes one
 * cell per keystroke).
 */
export function joinCells(
  cells: readonly CellInput[],
  reuse?: ReadonlyMap<string, JoinedCell>,
): { joined: string; starts: CellStart[]; magics: MagicLine[]; joinedCells: Map<string, JoinedCell> } {
  const starts: CellStart[] = [];
  const parts: string[] = [];
  const magics: MagicLine[] = [];
  const joinedCells = new Map<string, JoinedCell>();
  let line = 0;
  cells.forEach((c, index) => {
    if (c.kind !== "code") return;
    const j = joinedCells.get(c.text) ?? reuse?.get(c.text) ?? joinCell(c.text);
    joinedCells.set(c.text, j);
    starts.push({ cell: index, line, lines: j.lines });
    parts.push(j.text);
    for (const m of j.magics) magics.push({ ...m, line: m.line + line });
    line += j.lines;
  });
  return { joined: parts.join("\n"), starts, magics, joinedCells };
}

/**
 * Whether a fix given as edits of cells (`cell`: index in `cells`; ranges in that cell's text, as
 * {@link lintNotebook} reports them) adds no syntax error to the notebook's code: the check lint.ts
 * `fixKeepsSyntax` makes, on the joined cells before and after (the editor's lint leaves it to the
 * moment a fix is offered: `lazyFixValidation`).
 */
export function cellFixParsesCleanly(
  cells: readonly CellInput[],
  edits: ReadonlyArray<{ cell: number; range: Range; newText: string }>,
): boolean {
  if (edits.some((e) => cells[e.cell]?.kind !== "code")) return false;
  const fixed = cells.map((c, i) => {
    const mine = edits.filter((e) => e.cell === i);
    return mine.length ? { ...c, text: applyEdits(c.text, mine) } : c;
  });
  return fixedTextParsesCleanly(joinCells(cells).joined, joinCells(fixed).joined);
}

/**
 * Lints the code cells of a notebook as one program; non-code cells are skipped.
 * @param keep (the editor) parse in chunks and return the notebook's {@link DocumentAnalysis} as
 *   `analysis` (its trees, and what the next lint continues from, the joined cells included; the
 *   caller disposes of it). `keep.previous`, the analysis the last lint of this notebook returned,
 *   has its trees edited to the new joined text (the one change between the texts), re-parsed only
 *   where it changed, and is handed over (lint.ts `lintPython`'s `previous`). Without `keep` no
 *   trees are returned.
 * @param file the notebook's absolute path (its shell lines' scripts are found from its folder); null
 *   for an unsaved notebook.
 * @returns the diagnostics by cell; with `keep`, the analysis and the joined text's model (lint.ts
 *   `LintResult.model`, valid while the trees are neither edited nor deleted); `starts`, where each
 *   code cell lies in the joined text.
 */
export function lintNotebook(
  cells: CellInput[],
  options: LintOptions = {},
  keep?: { previous?: DocumentAnalysis },
  file: string | null = null,
): {
  diagnostics: CellDiagnostic[];
  ruleFailures: RuleFailure[];
  /** The workspace files the shell lines' rules read (a launched script): the result depends on them. */
  deps?: string[];
  analysis?: DocumentAnalysis;
  model?: ModuleModel;
  starts: CellStart[];
} {
  const { joined, starts, magics, joinedCells } = joinCells(cells, keep?.previous?.cells);
  const where = cellWhere(starts);
  keep?.previous?.trees.editTo(pythonInput(joined));
  const result = lintPython(joined, options, {
    notebook: true,
    magics,
    where,
    ...(keep ? { incremental: true, previous: keep.previous } : {}),
  });
  if (!keep) result.tree?.delete();
  else if (result.analysis) result.analysis.cells = joinedCells;
  const locate = cellLocator(starts, cells);
  // An edit must fit in one cell; it may end at the start of the next cell's first line (the removal
  // of a cell's last line with its break). A fix with an edit across cells (code that runs on from one
  // cell into the next) cannot be applied cell by cell: it is not offered.
  const fitsInCell = (r: Range): boolean => {
    let s = starts[0];
    for (const st of starts) if (st.line <= r.start.line) s = st;
    const last = s.line + s.lines - 1;
    return r.end.line <= last || (r.end.line === last + 1 && r.end.character === 0);
  };
  const diagnostics = result.diagnostics.map((d): CellDiagnostic => {
    const at = locate(d.range);
    return {
      code: d.code,
      name: d.name,
      message: d.message,
      severity: d.severity,
      cell: at.cell,
      range: at.range,
      ...(d.related ? { related: d.related.map((r) => ({ ...locate(r.range), message: r.message })) } : {}),
      ...(d.kernelRestart ? { kernelRestart: d.kernelRestart } : {}),
      ...(d.fix && d.fix.edits.every((e) => fitsInCell(e.range))
        ? {
            fix: {
              title: d.fix.title,
              safe: d.fix.safe,
              ...(d.fix.note ? { note: d.fix.note } : {}),
              edits: d.fix.edits.map((e) => ({ ...locate(e.range), newText: e.newText })),
            },
          }
        : {}),
    };
  });
  const shell = shellLineFindings(magics, options, locate, where, file);
  return {
    diagnostics: [
      ...diagnostics,
      ...shell.diagnostics,
      ...executionOrderFindings(cells, options, diagnostics, joinedCells),
    ],
    ruleFailures: result.ruleFailures,
    ...(shell.deps.length ? { deps: shell.deps } : {}),
    ...(keep && result.analysis ? { analysis: result.analysis } : {}),
    ...(keep && result.model ? { model: result.model } : {}),
    starts,
  };
}

/**
 * The launch rules of shell scripts that read a notebook's shell lines: processes launched against
 * the GPUs visible to them (GPU040), a launcher's options after the script (GPU042), a container's
 * GPUs (GPU043), CUDA_VISIBLE_DEVICES ids the machine lacks (GPU045), a device ordinal option the
 * started script cannot use (GPU052).
 */
const SHELL_LINE_RULES: ReadonlySet<string> = new Set(["GPU040", "GPU042", "GPU043", "GPU045", "GPU052"]);

/** One line of the script made of a notebook's shell lines: the cell line it comes from (0-based in the joined text), its column there, its length, and how many characters of that line precede the script line's text (-1: a whole-line export written for `%env`). */
interface ScriptLineOrigin {
  line: number;
  column: number;
  length: number;
  shift: number;
}

/**
 * The notebook's shell lines (`!torchrun --nproc_per_node=8 train.py`, `!CUDA_VISIBLE_DEVICES=3
 * python x.py`) read as the commands of a shell script, with the kernel's `%env` settings before
 * them as exports, in the cells' order: IPython runs each `!` line in a shell of its own that
 * inherits the kernel's environment (IPython documentation, "System shell access"; `%env` sets
 * os.environ), so a `%env CUDA_VISIBLE_DEVICES=0` reaches every later `!` line, while a `!export`
 * or a bare `!N=8` reaches none (GPU014) and is left out. A command continued on the next lines
 * with `\` (MagicLine.continuation: IPython joins them) keeps its lines, which the shell joins as
 * it does in a script. IPython's own expansions (`{n}`, `$n` of a Python variable) are left as the
 * shell words they look like: unknown, so silent. `file`: the notebook's path (the launched scripts
 * are found from its folder); null for an unsaved one. Findings of {@link SHELL_LINE_RULES} come
 * back on their cell's line, with the files the rules read (`deps`).
 */
function shellLineFindings(
  magics: readonly MagicLine[],
  options: LintOptions,
  locate: (r: Range) => { cell: number; range: Range },
  where: (line: number) => string,
  file: string | null,
): { diagnostics: CellDiagnostic[]; deps: string[] } {
  const lines: string[] = [];
  const origin: ScriptLineOrigin[] = [];
  for (const m of magics) {
    if (m.text.startsWith("%")) {
      for (const e of magicEvents(m))
        if (e.kind === "envWrite" && e.literal !== null && /^[A-Za-z_][A-Za-z0-9_]*$/.test(e.variable)) {
          lines.push(`export ${e.variable}='${e.literal.replace(/'/g, "'\\''")}'`);
          origin.push({ line: m.line, column: m.column, length: m.text.length, shift: -1 });
        }
      continue;
    }
    const body = m.text.replace(/^!+/, "");
    const words = body.trim().split(/\s+/);
    // A line that only sets variables (`!export X=1`, `!X=1`) sets them for its own shell only.
    if (!words[0] || words[0] === "export" || words.every((w) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(w))) continue;
    lines.push(body);
    origin.push({ line: m.line, column: m.column, length: m.text.length, shift: m.text.length - body.length });
    (m.continuation ?? []).forEach((text, k) => {
      lines.push(text);
      origin.push({ line: m.line + k + 1, column: 0, length: text.length, shift: 0 });
    });
  }
  if (!origin.some((o) => o.shift >= 0)) return { diagnostics: [], deps: [] };
  const found = lintManifest(lines.join("\n") + "\n", "jobscript", options, { file });
  const back = (r: Range): Range => {
    const at = (p: Range["start"]) => {
      const o = origin[p.line];
      if (!o) return null;
      return { line: o.line, character: o.column + Math.max(o.shift, 0) + (o.shift < 0 ? 0 : p.character) };
    };
    const start = at(r.start),
      end = at(r.end);
    if (!start) return r;
    const o = origin[r.start.line];
    const lineEnd = { line: o.line, character: o.column + o.length };
    return o.shift < 0 ? { start, end: lineEnd } : { start, end: end && end.line === start.line ? end : lineEnd };
  };
  // The rules name the script's lines ("exported on line 1"): say which cell and line that is.
  // A `%env` line stands in the script as an export: name it as what it is.
  const named = (message: string) =>
    message.replace(/\b(exported on )?line (\d+)\b/g, (text, exported: string | undefined, n: string) => {
      const o = origin[Number(n) - 1];
      if (!o) return text;
      return `${exported ? (o.shift < 0 ? "set with %env on " : exported) : ""}${where(o.line)}`;
    });
  const diagnostics = found.diagnostics
    .filter((d) => SHELL_LINE_RULES.has(d.code) && origin[d.range.start.line])
    .map((d): CellDiagnostic => {
      const at = locate(back(d.range));
      return {
        code: d.code,
        name: d.name,
        message: named(d.message),
        severity: d.severity,
        cell: at.cell,
        range: at.range,
        ...(d.related?.length
          ? {
              related: d.related
                // A place in another file (a script a `!bash x.sh` line runs) has no cell: left out.
                .filter((r) => !r.file && origin[r.range.start.line])
                .map((r) => ({ ...locate(back(r.range)), message: named(r.message) })),
            }
          : {}),
      };
    });
  return { diagnostics, deps: found.deps ?? [] };
}

/**
 * Maps a range of joined cells' text to its cell and the range within it: `starts` says where each
 * cell lies (its `cell` an index into `cells`). A range running past its cell's end (a removal up to
 * the next line) ends at the cell's last character.
 */
function cellLocator(
  starts: readonly CellStart[],
  cells: readonly CellInput[],
): (r: Range) => { cell: number; range: Range } {
  const lastLineLength = new Map<number, number>();
  return (r) => {
    let s = starts[0];
    for (const st of starts) if (st.line <= r.start.line) s = st;
    const endLine = Math.min(r.end.line, s.line + s.lines - 1);
    let endCharacter = r.end.character;
    if (endLine !== r.end.line) {
      if (!lastLineLength.has(s.cell)) {
        const text = cells[s.cell].text;
        lastLineLength.set(s.cell, text.length - lineStarts(text)[s.lines - 1]);
      }
      endCharacter = lastLineLength.get(s.cell)!;
    }
    return {
      cell: s.cell,
      range: {
        start: { line: r.start.line - s.line, character: r.start.character },
        end: { line: endLine - s.line, character: endCharacter },
      },
    };
  };
}

/**
 * GPU050: the findings that the order in which the cells last ran adds to their own order. The
 * code cells with a saved execution count are the ones that ran (a cell without one did not run in
 * that session and is left out); applies when at least two ran, their counts differ (one session)
 * and their order is not the cells' order. The cells that ran are joined in the order of their
 * counts and linted with the rules that depend on what ran before
 * (GPU050 REPLAYED_RULES), and each finding that the cells' own order (`inOrder`) does not have at
 * the same cell and place becomes a GPU050 warning that names the two cells and their counts.
 * Empty when GPU050 is off (select/ignore/preview) or the counts do not apply. `joinedCells`: the
 * cells as the lint in the cells' order joined them, reused.
 */
function executionOrderFindings(
  cells: readonly CellInput[],
  options: LintOptions,
  inOrder: readonly CellDiagnostic[],
  joinedCells?: ReadonlyMap<string, JoinedCell>,
): CellDiagnostic[] {
  if (!isRuleOn(GPU050, options)) return [];
  const ran = cells
    .map((c, index) => ({ c, index }))
    .filter(({ c }) => c.kind === "code" && typeof c.executionCount === "number");
  if (ran.length < 2 || new Set(ran.map(({ c }) => c.executionCount)).size !== ran.length) return [];
  const byCount = [...ran].sort((a, b) => a.c.executionCount! - b.c.executionCount!);
  if (byCount.every((r, i) => r.index === ran[i].index)) return [];
  const { joined, starts, magics } = joinCells(
    byCount.map((r) => r.c),
    joinedCells,
  );
  // Places in the replayed text, told by the cells' own numbers (cell K counts every cell).
  const real = starts.map((st) => ({ ...st, cell: byCount[st.cell].index }));
  const result = replayed(joined, real, magics, options);
  const count = new Map(ran.map(({ c, index }) => [index, c.executionCount!]));
  const locate = cellLocator(real, cells);
  const key = (cell: number, r: Range) => `${cell}:${r.start.line}:${r.start.character}`;
  const seen = new Set(inOrder.filter((d) => REPLAYED_RULES.includes(d.code)).map((d) => key(d.cell, d.range)));
  const out: CellDiagnostic[] = [];
  for (const d of result.diagnostics) {
    if (d.severity !== "error" && d.severity !== "warning") continue;
    const at = locate(d.range);
    if (seen.has(key(at.cell, at.range))) continue;
    seen.add(key(at.cell, at.range));
    // The cell that had run before it (the finding's first related place, where the runtime started).
    const before = d.related?.length ? locate(d.related[0].range).cell : null;
    const order =
      before !== null && before > at.cell
        ? `cell ${at.cell + 1} last ran as In [${count.get(at.cell)}], after cell ${before + 1} (In [${count.get(before)}])`
        : `cell ${at.cell + 1} last ran as In [${count.get(at.cell)}], after cells below it`;
    out.push({
      code: GPU050.meta.code,
      name: GPU050.meta.name,
      severity: options.severity?.[GPU050.meta.code] ?? GPU050.meta.severity,
      message: `In the order the cells last ran (${order}; saved execution counts): ${d.message}; restart the kernel and run the cells in order`,
      cell: at.cell,
      range: at.range,
      ...(d.related ? { related: d.related.map((r) => ({ ...locate(r.range), message: r.message })) } : {}),
    });
  }
  return out;
}

/**
 * The last replays' findings, by everything they depend on: the replayed text, where its cells are,
 * the options as data (the project lookup by its version). In the editor a notebook is linted at
 * every keystroke, while the replay changes only when a cell that ran is edited or runs again: a
 * keystroke in a cell that has not run (or in a markdown cell) reuses the last replay instead of
 * linting the notebook a second time (a 1,600-line notebook: about 40 ms).
 */
const REPLAYS = new Map<string, ReturnType<typeof lintPython>["diagnostics"]>();

function replayed(
  joined: string,
  real: readonly CellStart[],
  magics: MagicLine[],
  options: LintOptions,
): { diagnostics: ReturnType<typeof lintPython>["diagnostics"] } {
  const key = JSON.stringify([joined, real, { ...options, project: options.project?.version ?? null }]);
  const kept = REPLAYS.get(key);
  if (kept) return { diagnostics: kept };
  const result = lintPython(
    joined,
    { ...options, select: REPLAYED_RULES, ignore: [] },
    { notebook: true, magics, where: cellWhere(real) },
  );
  result.tree?.delete();
  REPLAYS.set(key, result.diagnostics);
  if (REPLAYS.size > 8) REPLAYS.delete(REPLAYS.keys().next().value!);
  return { diagnostics: result.diagnostics };
}

/** A code cell's place in the joined text of {@link joinCells}: its index among all cells, first line (0-based) and line count. */
export interface CellStart {
  cell: number;
  line: number;
  lines: number;
}

/** "cell K, line N" (K counting every cell, as VS Code shows them) of a 0-based line of the joined text. */
export function cellWhere(starts: readonly CellStart[]): (line: number) => string {
  return (l: number): string => {
    let s = starts[0];
    for (const st of starts) if (st.line <= l) s = st;
    return s ? `cell ${s.cell + 1}, line ${l - s.line + 1}` : `line ${l + 1}`;
  };
}

/**
 * Code cell `cell` (its index among all of `cells`) in the joined text, for the editor's machine
 * hovers and inlay hints in a cell: they read the model of the whole notebook (a cell's
 * CUDA_VISIBLE_DEVICES write decides what `"cuda:0"` in a later cell is), at positions moved by the
 * cell's first line. `joined` and `magics` are what a lint parses (to analyse it when no lint's
 * model is kept); `where` names a joined line as "cell K, line N". Null for a markup cell or an
 * index out of range.
 * @param kept the analysis of the notebook's last lint (with `keep`), if any: the cells it joined
 *   are not blanked again (a notebook's every visible cell asks for its inlay hints).
 */
export function cellInJoined(
  cells: readonly CellInput[],
  cell: number,
  kept?: DocumentAnalysis,
): { start: CellStart; joined: string; magics: MagicLine[]; where: (line: number) => string } | null {
  if (cells[cell]?.kind !== "code") return null;
  const { joined, starts, magics } = joinCells(cells, kept?.cells);
  const start = starts.find((s) => s.cell === cell)!;
  return { start, joined, magics, where: cellWhere(starts) };
}
