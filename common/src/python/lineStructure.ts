/**
 * CPython's line structure, for checking fixes: where logical lines start, how they are indented,
 * and whether every indented block follows a `:`. tree-sitter's error recovery accepts texts that
 * CPython rejects at this level (a line inserted after a `\` continuation, `pass`
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
/**
 * Whether UTF-16 code unit `k` can be part of a word as the tokenizer reads one: a letter, digit,
 * `_` or any non-ASCII character (identifiers, numbers and string prefixes). The engine's text
 * scans (server/src/engine/: prefilter.ts, limits.ts, python/model.ts) use the same test.
 */
export const isWordCode = (k: number): boolean =>
  (k >= 97 && k <= 122) || (k >= 65 && k <= 90) || (k >= 48 && k <= 57) || k === 95 || k > 0x7f;
/** The longest string prefix in PREFIXES. */
const PREFIX_MAX = 2;

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

/**
 * The words of the code (identifiers, keywords and numbers, also those in the replacement fields
 * of f-strings, which are code; not those inside strings or comments) as CPython's
 * tokenizer reads them, each with its start and end offset, and where each logical line ends (the
 * offset of the newline that ends it at bracket depth 0; blank and comment lines end too). Returns
 * the first line-structure error, where the scan stopped (later words are not reported), or null.
 * Linear; never throws.
 */
export function codeWords(
  text: string,
  onWord: (start: number, end: number) => void,
  onLineEnd: (offset: number) => void,
): LineStructureError | null {
  return new LineScanner(text, undefined, { onWord, onLineEnd }).scan();
}

function scanLines(
  text: string,
  onLine?: (line: number, offset: number, col: number) => void,
): LineStructureError | null {
  return new LineScanner(text, onLine).scan();
}

/**
 * Calls `onStart` with the offset and 0-based line of each logical line at column 0 (no
 * indentation) that starts after `from`, in order, until it returns true or the text ends. `from`
 * must be such a line's start (or 0): there the tokenizer is outside brackets and strings.
 * Indentation is not checked, so a line-structure error does not end the scan (server/src/engine/python/moduleTrees.ts
 * splits a module there; CPython's own line rules decide where a logical line starts). Linear in
 * the part scanned; never throws.
 */
export function columnZeroLines(
  text: string,
  from: { offset: number; line: number },
  onStart: (offset: number, line: number) => boolean,
): void {
  const scanner = new LineScanner(
    text,
    (line, offset, col) => {
      if (col !== 0 || offset === from.offset) return false;
      return onStart(offset, line);
    },
    undefined,
    from,
  );
  scanner.scan();
}

/** What a scan reports besides logical line starts (codeWords). */
interface ScanHooks {
  onWord(start: number, end: number): void;
  onLineEnd(offset: number): void;
}

const TAB = "inconsistent use of tabs and spaces in indentation";

/** One scan of a text (the state of CPython's tokenizer that line structure needs). */
class LineScanner {
  private readonly n: number;
  private i = 0;
  private line = 0;
  private level = 0; // bracket depth
  private readonly ind = [0];
  private readonly alt = [0];
  private pendingBlock = false; // the previous logical line ended with `:`
  private lastColon = false; // the last token of this logical line so far is `:`

  /** Set by a scan from an offset (columnZeroLines): it stops when `onLine` returns true and checks no indentation. */
  private readonly partial: boolean;
  private stopped = false;

  constructor(
    private readonly text: string,
    private readonly onLine?: (line: number, offset: number, col: number) => boolean | void,
    private readonly hooks?: ScanHooks,
    from?: { offset: number; line: number },
  ) {
    this.n = text.length;
    this.partial = !!from;
    if (from) {
      this.i = from.offset;
      this.line = from.line;
    }
  }

  scan(): LineStructureError | null {
    const { text, n } = this;
    let atBol = true;
    while (this.i <= n) {
      if (atBol) {
        atBol = false;
        const err = this.lineStart();
        if (err) return err;
        if (this.stopped) return null;
      }
      if (this.i >= n) break;
      const k = text.charCodeAt(this.i);
      if (isWordCode(k)) {
        this.word();
        this.lastColon = false;
        continue;
      }
      if (k === 32 || k === 9 || k === 12) {
        this.i++;
        continue;
      }
      const c = text[this.i];
      if (k === 35) {
        while (this.i < n && !this.isNl(this.i)) this.i++;
        continue;
      } // `#`
      if (c === "\\" && this.isNl(this.i + 1)) {
        this.i++;
        this.newline();
        continue;
      }
      if (this.isNl(this.i)) {
        if (this.level === 0) this.hooks?.onLineEnd(this.i);
        this.newline();
        if (this.level === 0) {
          if (this.lastColon) this.pendingBlock = true;
          this.lastColon = false;
        }
        atBol = true;
        continue;
      }
      this.token(c);
    }
    if (!this.partial && (this.pendingBlock || this.lastColon))
      return this.error("IndentationError", "expected an indented block");
    return null;
  }

  /** One token that is not whitespace, a comment or a newline: a string, a word or a character. */
  private token(c: string): void {
    const text = this.text;
    if (c === "'" || c === '"') {
      this.scanString("");
      this.lastColon = false;
      return;
    }
    if (c === "(" || c === "[" || c === "{") this.level++;
    else if ((c === ")" || c === "]" || c === "}") && this.level > 0) this.level--;
    this.lastColon = c === ":" && text[this.i + 1] !== "=";
    this.i += c === ":" && text[this.i + 1] === "=" ? 2 : 1;
  }

  /**
   * A word (identifier, keyword or number) starting at `i`, or the prefix of the string after it
   * (then the string is scanned). Leaves `i` after it. A word is sliced and lower-cased only when a
   * quote follows it and it is no longer than a prefix.
   */
  private word(): void {
    const text = this.text,
      n = this.n,
      s = this.i;
    let i = s + 1;
    while (i < n && isWordCode(text.charCodeAt(i))) i++;
    this.i = i;
    const q = text.charCodeAt(i);
    if ((q === 0x27 || q === 0x22) && i - s <= PREFIX_MAX) {
      const prefix = text.slice(s, i).toLowerCase();
      if (PREFIXES.has(prefix)) {
        this.scanString(prefix);
        return;
      }
    }
    this.hooks?.onWord(s, i);
  }

  /** At the start of a physical line: its indentation, checked when it starts a logical line. */
  private lineStart(): LineStructureError | null {
    const text = this.text;
    let col = 0,
      altcol = 0,
      contCol = 0;
    for (;;) {
      const c = text[this.i];
      if (c === " ") {
        col++;
        altcol++;
        this.i++;
      } else if (c === "\t") {
        col = (Math.floor(col / TAB_SIZE) + 1) * TAB_SIZE;
        altcol = (Math.floor(altcol / ALT_TAB_SIZE) + 1) * ALT_TAB_SIZE;
        this.i++;
      } else if (c === "\f") {
        col = altcol = 0;
        this.i++;
      } else if (c === "\\" && this.isNl(this.i + 1)) {
        contCol = contCol || col;
        this.i++;
        this.newline();
      } else break;
    }
    const blank = this.i >= this.n || text[this.i] === "#" || this.isNl(this.i);
    if (blank || this.level !== 0) return null;
    if (contCol) {
      col = contCol;
      altcol = contCol;
    }
    if (this.onLine?.(this.line, this.i, col)) {
      this.stopped = true;
      return null;
    }
    if (this.partial) return null;
    const err = this.indentation(col, altcol);
    this.pendingBlock = false;
    return err;
  }

  /** The INDENT/DEDENT check of a logical line at `col` (tab size 8) and `altcol` (tab size 1). */
  private indentation(col: number, altcol: number): LineStructureError | null {
    const { ind, alt } = this;
    const top = ind.length - 1;
    if (col === ind[top]) {
      if (altcol !== alt[top]) return this.error("TabError", TAB);
      if (this.pendingBlock) return this.error("IndentationError", "expected an indented block");
    } else if (col > ind[top]) {
      if (altcol <= alt[top]) return this.error("TabError", TAB);
      ind.push(col);
      alt.push(altcol);
      if (!this.pendingBlock) return this.error("IndentationError", "unexpected indent");
    } else {
      while (ind.length > 1 && col < ind[ind.length - 1]) {
        ind.pop();
        alt.pop();
      }
      if (col !== ind[ind.length - 1])
        return this.error("IndentationError", "unindent does not match any outer indentation level");
      if (altcol !== alt[alt.length - 1]) return this.error("TabError", TAB);
      if (this.pendingBlock) return this.error("IndentationError", "expected an indented block");
    }
    return null;
  }

  private error(kind: LineStructureError["kind"], message: string): LineStructureError {
    return { kind, message, line: this.line };
  }

  private isNl(k: number): boolean {
    const c = this.text.charCodeAt(k);
    return c === 10 || c === 13;
  }

  /** Consumes a newline at `i` (\r\n, \n or \r); returns whether there was one. */
  private newline(): boolean {
    const text = this.text;
    const c = text.charCodeAt(this.i);
    if (c === 13) {
      this.i += text.charCodeAt(this.i + 1) === 10 ? 2 : 1;
      this.line++;
      return true;
    }
    if (c === 10) {
      this.i++;
      this.line++;
      return true;
    }
    return false;
  }

  /** Scans a string whose opening quote is at `i`; `prefix` in lower case. Leaves `i` after it. */
  private scanString(prefix: string): void {
    const text = this.text,
      n = this.n;
    const q = text.charCodeAt(this.i);
    const triple = text.charCodeAt(this.i + 1) === q && text.charCodeAt(this.i + 2) === q;
    this.i += triple ? 3 : 1;
    const f = prefix.includes("f") || prefix.includes("t");
    while (this.i < n) {
      const c = text.charCodeAt(this.i);
      if (c === 92) {
        this.i++;
        if (!this.newline()) this.i++;
        continue;
      } // `\`
      if (c === 10 || c === 13) {
        if (!triple) return;
        this.newline();
        continue;
      } // unterminated: CPython stops; so do we
      if (c === q && (!triple || (text.charCodeAt(this.i + 1) === q && text.charCodeAt(this.i + 2) === q))) {
        this.i += triple ? 3 : 1;
        return;
      }
      if (f && c === 123) {
        if (text.charCodeAt(this.i + 1) === 123) {
          this.i += 2;
          continue;
        }
        this.i++;
        this.scanField();
        continue;
      } // `{`
      this.i++;
    }
  }

  /** Scans an f-string replacement field after its `{`, up to and including its `}`. */
  private scanField(): void {
    const text = this.text;
    let depth = 0;
    while (this.i < this.n) {
      const c = text[this.i];
      if (this.newline()) continue;
      if (c === "\\") {
        this.i++;
        if (!this.newline()) this.i++;
        continue;
      }
      if (c === "'" || c === '"') {
        this.scanString("");
        continue;
      }
      if (isWordCode(text.charCodeAt(this.i))) {
        this.word();
        continue;
      }
      if (c === "(" || c === "[" || c === "{") {
        depth++;
        this.i++;
        continue;
      }
      if (c === ")" || c === "]") {
        if (depth > 0) depth--;
        this.i++;
        continue;
      }
      if (c === "}") {
        this.i++;
        if (depth === 0) return;
        depth--;
        continue;
      }
      if (c === ":" && depth === 0) {
        this.i++;
        this.scanFormatSpec();
        return;
      }
      this.i++;
    }
  }

  /** Scans a format spec after its `:`: literal text with nested fields, up to and including the field's `}`. */
  private scanFormatSpec(): void {
    while (this.i < this.n) {
      const c = this.text[this.i];
      if (this.newline()) continue;
      if (c === "{") {
        this.i++;
        this.scanField();
        continue;
      }
      if (c === "}") {
        this.i++;
        return;
      }
      this.i++;
    }
  }
}
