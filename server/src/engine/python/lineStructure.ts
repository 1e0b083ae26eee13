/**
 * CPython's line structure, for checking fixes: where logical lines start, how they are indented,
 * and whether every indented block follows a `:`. tree-sitter's error recovery accepts texts that
 * CPython rejects at this level (issue 18 item 7: a line inserted after a `\` continuation, `pass`
 * indented with spaces in a tab-indented block), so each fix is also checked with these rules.
 *
 * This mirrors the parts of CPython's tokenizer (Parser/tokenizer.c, `tok_get` and its indentation
 * code; the Python Language Reference, "Lexical analysis", 2.1 Line structure) that decide
 * INDENT/DEDENT, and the grammar's one use of INDENT (`block: NEWLINE INDENT statements DEDENT`,
 * always after `:`):
 *   - a physical line ends a logical line unless it ends inside brackets, inside a string, or with
 *     a `\` (a continued line's indentation is ignored);
 *   - lines holding only whitespace and comments do not count;
 *   - a form feed resets the column; a tab moves it to the next multiple of 8 ("col") and, for the
 *     consistency check, of 1 ("altcol"): both columns must order the lines the same way, or the
 *     tokenizer raises TabError ("inconsistent use of tabs and spaces in indentation");
 *   - a dedent must land on an outer level ("unindent does not match any outer indentation level");
 *   - an indent needs a logical line ending in `:` before it ("unexpected indent"), and a logical
 *     line ending in `:` needs an indent after it ("expected an indented block").
 * Strings are lexed as CPython 3.12 does (PEP 701: replacement fields of f-strings are code and may
 * hold strings with the same quotes); only what matters for line structure is kept. It reports the
 * first such error, as CPython does, and nothing else (other syntax errors are tree-sitter's to count).
 */

/** The first line-structure error of a text, as CPython reports it. `line` is 0-based. */
export interface LineStructureError {
  kind: "IndentationError" | "TabError";
  message: string;
  line: number;
}

const TAB_SIZE = 8; // CPython's tok->tabsize
const ALT_TAB_SIZE = 1; // CPython's ALTTABSIZE
const PREFIXES = new Set(["r", "u", "b", "br", "rb", "f", "fr", "rf", "t", "tr", "rt"]);
/** Letters, digits, `_` and any non-ASCII character (identifiers, numbers and string prefixes). */
const isWordChar = (c: string): boolean => {
  const k = c.charCodeAt(0);
  return (k >= 97 && k <= 122) || (k >= 65 && k <= 90) || (k >= 48 && k <= 57) || k === 95 || k > 0x7f;
};

/**
 * The first indentation, tab or block error CPython's tokenizer and parser would raise for `text`,
 * or null when there is none. Linear in the length of the text; never throws.
 */
export function lineStructureError(text: string): LineStructureError | null {
  return scanLines(text);
}

/**
 * Calls `onLine` with the 0-based line, start offset and column (tab size 8) of every logical
 * line (blank and comment-only lines left out), in order, up to the first line-structure error.
 * Lines inside strings and brackets and after a `\` are not logical line starts. Linear; never throws.
 */
export function logicalLines(text: string, onLine: (line: number, offset: number, col: number) => void): void {
  scanLines(text, onLine);
}

function scanLines(text: string, onLine?: (line: number, offset: number, col: number) => void): LineStructureError | null {
  const n = text.length;
  let i = 0;
  let line = 0;
  let level = 0; // bracket depth
  const ind = [0];
  const alt = [0];
  let pendingBlock = false; // the previous logical line ended with `:`
  let lastColon = false; // the last token of this logical line so far is `:`
  let atBol = true;

  /** Consumes a newline at `i` (\r\n, \n or \r); returns whether there was one. */
  const newline = (): boolean => {
    if (text[i] === "\r") { i += text[i + 1] === "\n" ? 2 : 1; line++; return true; }
    if (text[i] === "\n") { i++; line++; return true; }
    return false;
  };
  const isNl = (k: number) => text[k] === "\n" || text[k] === "\r";

  /** Scans a string whose opening quote is at `i`; `prefix` in lower case. Leaves `i` after it. */
  const scanString = (prefix: string): void => {
    const q = text[i];
    const triple = text[i + 1] === q && text[i + 2] === q;
    i += triple ? 3 : 1;
    const f = prefix.includes("f") || prefix.includes("t");
    while (i < n) {
      const c = text[i];
      if (c === "\\") { i++; if (!newline()) i++; continue; }
      if (isNl(i)) { if (!triple) return; newline(); continue; } // unterminated: CPython stops; so do we
      if (c === q && (!triple || (text[i + 1] === q && text[i + 2] === q))) { i += triple ? 3 : 1; return; }
      if (f && c === "{") { if (text[i + 1] === "{") { i += 2; continue; } i++; scanField(); continue; }
      i++;
    }
  };

  /** Scans an f-string replacement field after its `{`, up to and including its `}`. */
  const scanField = (): void => {
    let depth = 0;
    while (i < n) {
      const c = text[i];
      if (newline()) continue;
      if (c === "\\") { i++; if (!newline()) i++; continue; }
      if (c === "'" || c === '"') { scanString(""); continue; }
      if (isWordChar(c)) {
        const s = i;
        while (i < n && isWordChar(text[i])) i++;
        if ((text[i] === "'" || text[i] === '"') && PREFIXES.has(text.slice(s, i).toLowerCase())) scanString(text.slice(s, i).toLowerCase());
        continue;
      }
      if (c === "(" || c === "[" || c === "{") { depth++; i++; continue; }
      if (c === ")" || c === "]") { if (depth > 0) depth--; i++; continue; }
      if (c === "}") { i++; if (depth === 0) return; depth--; continue; }
      if (c === ":" && depth === 0) { i++; scanFormatSpec(); return; }
      i++;
    }
  };

  /** Scans a format spec after its `:`: literal text with nested fields, up to and including the field's `}`. */
  const scanFormatSpec = (): void => {
    while (i < n) {
      const c = text[i];
      if (newline()) continue;
      if (c === "{") { i++; scanField(); continue; }
      if (c === "}") { i++; return; }
      i++;
    }
  };

  const error = (kind: LineStructureError["kind"], message: string): LineStructureError => ({ kind, message, line });
  const TAB = "inconsistent use of tabs and spaces in indentation";

  while (i <= n) {
    if (atBol) {
      atBol = false;
      let col = 0, altcol = 0, contCol = 0;
      for (;;) {
        const c = text[i];
        if (c === " ") { col++; altcol++; i++; }
        else if (c === "\t") { col = (Math.floor(col / TAB_SIZE) + 1) * TAB_SIZE; altcol = (Math.floor(altcol / ALT_TAB_SIZE) + 1) * ALT_TAB_SIZE; i++; }
        else if (c === "\f") { col = altcol = 0; i++; }
        else if (c === "\\" && isNl(i + 1)) { contCol = contCol || col; i++; newline(); }
        else break;
      }
      const blank = i >= n || text[i] === "#" || isNl(i);
      if (!blank && level === 0) {
        if (contCol) { col = contCol; altcol = contCol; }
        onLine?.(line, i, col);
        const top = ind.length - 1;
        if (col === ind[top]) {
          if (altcol !== alt[top]) return error("TabError", TAB);
          if (pendingBlock) return error("IndentationError", "expected an indented block");
        } else if (col > ind[top]) {
          if (altcol <= alt[top]) return error("TabError", TAB);
          ind.push(col); alt.push(altcol);
          if (!pendingBlock) return error("IndentationError", "unexpected indent");
        } else {
          while (ind.length > 1 && col < ind[ind.length - 1]) { ind.pop(); alt.pop(); }
          if (col !== ind[ind.length - 1]) return error("IndentationError", "unindent does not match any outer indentation level");
          if (altcol !== alt[alt.length - 1]) return error("TabError", TAB);
          if (pendingBlock) return error("IndentationError", "expected an indented block");
        }
        pendingBlock = false;
      }
    }
    if (i >= n) break;
    const c = text[i];
    if (c === " " || c === "\t" || c === "\f") { i++; continue; }
    if (c === "#") { while (i < n && !isNl(i)) i++; continue; }
    if (c === "\\" && isNl(i + 1)) { i++; newline(); continue; }
    if (isNl(i)) {
      newline();
      if (level === 0) { if (lastColon) pendingBlock = true; lastColon = false; }
      atBol = true;
      continue;
    }
    if (c === "'" || c === '"') { scanString(""); lastColon = false; continue; }
    if (isWordChar(c)) {
      const s = i;
      while (i < n && isWordChar(text[i])) i++;
      const word = text.slice(s, i).toLowerCase();
      if ((text[i] === "'" || text[i] === '"') && PREFIXES.has(word)) scanString(word);
      lastColon = false;
      continue;
    }
    if (c === "(" || c === "[" || c === "{") level++;
    else if ((c === ")" || c === "]" || c === "}") && level > 0) level--;
    lastColon = c === ":" && text[i + 1] !== "=";
    i += c === ":" && text[i + 1] === "=" ? 2 : 1;
  }
  if (pendingBlock || lastColon) return error("IndentationError", "expected an indented block");
  return null;
}
