/**
 * Jupyter notebooks as one program: code cells joined in order (the kernel keeps its state from
 * cell to cell), IPython lines (`%env`, `!export`, other magics) blanked before parsing and kept as
 * timeline events, and diagnostics mapped back to cells.
 */
import type { LintDiagnostic, Range, TextEdit } from "./types";
import type { MagicLine } from "./python/model";
import { lintPython, type LintOptions, type RuleFailure } from "./lint";
import { lineStarts } from "./fixes";

/** One cell as given by the caller. */
export interface CellInput {
  kind: "code" | "markup";
  /** The cell's source text. */
  text: string;
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
  const nb = JSON.parse(json) as { cells?: Array<{ cell_type?: string; source?: string | string[] }> };
  if (!nb || !Array.isArray(nb.cells)) throw new Error("not a Jupyter notebook: no \"cells\" array");
  return nb.cells.map((c) => ({
    kind: c.cell_type === "code" ? "code" : "markup",
    text: Array.isArray(c.source) ? c.source.join("") : typeof c.source === "string" ? c.source : "",
  }));
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
      magics.push({ line: lineOffset + k / 2, column, text: trimmed });
      parts[k] = " ".repeat(line.length);
    }
  }
  return { text: parts.join(""), magics };
}

/** Lints the code cells of a notebook as one program; non-code cells are skipped. */
export function lintNotebook(cells: CellInput[], options: LintOptions = {}): { diagnostics: CellDiagnostic[]; ruleFailures: RuleFailure[] } {
  const starts: Array<{ cell: number; line: number; lines: number }> = [];
  const parts: string[] = [];
  const magics: MagicLine[] = [];
  let line = 0;
  cells.forEach((c, index) => {
    if (c.kind !== "code") return;
    const blank = blankMagics(c.text, line);
    const count = lineStarts(c.text).length;
    starts.push({ cell: index, line, lines: count });
    // A cell ending in a lone \r would merge with the joining \n into one \r\n: use \n (same length).
    parts.push(blank.text.includes("\r") ? blank.text.replace(/\r(?!\n)/g, "\n") : blank.text);
    magics.push(...blank.magics);
    line += count;
  });
  const joined = parts.join("\n");
  const where = (l: number): string => {
    let s = starts[0];
    for (const st of starts) if (st.line <= l) s = st;
    return s ? `cell ${s.cell + 1}, line ${l - s.line + 1}` : `line ${l + 1}`;
  };
  const result = lintPython(joined, options, { notebook: true, magics, where });
  result.tree?.delete();
  const lastLineLength = new Map<number, number>();
  const locate = (r: Range): { cell: number; range: Range } => {
    let s = starts[0];
    for (const st of starts) if (st.line <= r.start.line) s = st;
    const endLine = Math.min(r.end.line, s.line + s.lines - 1);
    // A range running past the cell's end (a removal up to the next line) ends at its last character.
    let endCharacter = r.end.character;
    if (endLine !== r.end.line) {
      if (!lastLineLength.has(s.cell)) { const text = cells[s.cell].text; lastLineLength.set(s.cell, text.length - lineStarts(text)[s.lines - 1]); }
      endCharacter = lastLineLength.get(s.cell)!;
    }
    return {
      cell: s.cell,
      range: { start: { line: r.start.line - s.line, character: r.start.character }, end: { line: endLine - s.line, character: endCharacter } },
    };
  };
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
      code: d.code, name: d.name, message: d.message, severity: d.severity, cell: at.cell, range: at.range,
      ...(d.related ? { related: d.related.map((r) => ({ ...locate(r.range), message: r.message })) } : {}),
      ...(d.fix && d.fix.edits.every((e) => fitsInCell(e.range)) ? { fix: { title: d.fix.title, safe: d.fix.safe, ...(d.fix.note ? { note: d.fix.note } : {}), edits: d.fix.edits.map((e) => ({ ...locate(e.range), newText: e.newText })) } } : {}),
    };
  });
  return { diagnostics, ruleFailures: result.ruleFailures };
}
