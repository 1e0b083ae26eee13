/**
 * A POSIX/bash shell tokenizer for job scripts: words (with quoting, `$(...)`, `${...}`,
 * backquotes, backslash-newline continuations), operators, comments and here-documents (whose bodies
 * are skipped, so a `#SBATCH` line written into a generated script is never read as this script's
 * own), and the simple commands they form. Not a full shell grammar: compound commands (`if`, `for`,
 * `while`, `case`, functions, subshells) are walked through, their inner simple commands kept; the
 * text inside `bash -c '...'` or a `$(...)` is part of one word and not read as commands.
 *
 * Written here because the npm shell parsers do not fit a synchronous engine: `mvdan-sh` (the
 * GopherJS build of mvdan/sh) is marked deprecated in favour of `sh-syntax`, whose WebAssembly API is
 * asynchronous; `bash-parser` was last published in 2017.
 */
import type { SourceText } from "./source";

/** One shell word. Offsets are into the source text. */
export interface ShellWord {
  /** The word as written (quotes included). */
  raw: string;
  /**
   * The word with quotes removed and backslash escapes resolved; expansions (`$X`, `${X}`,
   * `$(...)`, backquotes) are left as written.
   */
  value: string;
  start: number;
  end: number;
  /** Whether any part of the word is an expansion (`$` or a backquote outside single quotes). */
  expands: boolean;
}

/** `NAME=value` before a command or alone. */
export interface ShellAssignment {
  name: string;
  /** The value part, unquoted as in {@link ShellWord.value}. */
  value: string;
  word: ShellWord;
}

/**
 * A compound command around a simple command: `if` (up to `fi`), `loop` (`for`, `select`, `while`,
 * `until`, up to `done`), `case` (up to `esac`), `brace` (`{ ... }`), `subshell` (`( ... )`, also
 * `(( ... ))`) and `function` (a function's body, `name() { ... }` or `function name { ... }`).
 */
export type ShellCompound = "if" | "loop" | "case" | "brace" | "subshell" | "function";

/** A simple command: its assignments, its words (redirections left out), and where it is. */
export interface ShellCommand {
  assignments: ShellAssignment[];
  words: ShellWord[];
  start: number;
  end: number;
  /**
   * The compound commands it is written in, outermost first (empty at the script's top level, as
   * far as this reader follows them: see {@link ShellCompound}); absent for a command not made by
   * {@link parseShell}.
   */
  enclosing?: readonly ShellCompound[];
}

/** A comment: from its `#` to the end of the line. */
export interface ShellComment {
  start: number;
  end: number;
  text: string;
}

/** The commands and comments of a script. */
export interface ShellScript {
  commands: ShellCommand[];
  comments: ShellComment[];
  /** Offset of the first word or operator (a `for`, `{` or `(` counts): where the first non-comment, non-blank line starts having text; null when none. */
  firstToken: number | null;
}

type Token = { kind: "word"; word: ShellWord } | { kind: "op"; op: string; start: number };

const OPS = [
  "<<<",
  "<<-",
  "&&",
  "||",
  ";;",
  ";&",
  "&>",
  ">>",
  "<<",
  ">&",
  "<&",
  ">|",
  "<>",
  "|&",
  ";",
  "&",
  "|",
  "(",
  ")",
  "<",
  ">",
  "\n",
];
/** `<<<` is a here-string (bash): its word is the input, not a here-document's delimiter. */
const REDIRECTS = new Set(["<<<", "&>", ">>", ">&", "<&", ">|", "<>", "<", ">"]);
const SEPARATORS = new Set([";", "&", "&&", "||", "|", "|&", "(", ")", ";;", ";&", "\n"]);
/** Reserved words that may start a command and are not the command itself. */
const PREFIX_WORDS = new Set([
  "if",
  "then",
  "else",
  "elif",
  "do",
  "while",
  "until",
  "!",
  "{",
  "}",
  "time",
  "fi",
  "done",
  "esac",
]);
const isName = (s: string) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(s);
const isBlank = (c: string) => c === " " || c === "\t" || c === "\r";
const isOpChar = (c: string) =>
  c === ";" || c === "&" || c === "|" || c === "(" || c === ")" || c === "<" || c === ">" || c === "\n";

/** Index after the `)` that closes a `$(` or `$((` opened just before `i` (quotes inside are honoured). */
function skipParens(t: string, i: number): number {
  let depth = 1;
  while (i < t.length && depth > 0) {
    const c = t[i];
    if (c === "\\") {
      i += 2;
      continue;
    }
    if (c === "'") {
      const j = t.indexOf("'", i + 1);
      i = j < 0 ? t.length : j + 1;
      continue;
    }
    if (c === '"') {
      i = skipDouble(t, i + 1).end;
      continue;
    }
    if (c === "(") depth++;
    else if (c === ")") depth--;
    i++;
  }
  return i;
}

/** Reads a double-quoted part starting after its `"`; returns the unquoted value and the index after the closing `"`. */
function skipDouble(t: string, i: number): { value: string; end: number; expands: boolean } {
  let value = "";
  let expands = false;
  while (i < t.length && t[i] !== '"') {
    const c = t[i];
    if (c === "\\" && i + 1 < t.length) {
      const n = t[i + 1];
      if (n === "\n") {
        i += 2;
        continue;
      }
      value += n === "$" || n === "`" || n === '"' || n === "\\" ? n : c + n;
      i += 2;
      continue;
    }
    if (c === "$" && t[i + 1] === "(") {
      const e = skipParens(t, i + 2);
      value += t.slice(i, e);
      expands = true;
      i = e;
      continue;
    }
    if (c === "$" && t[i + 1] === "{") {
      const e = t.indexOf("}", i + 2);
      const end = e < 0 ? t.length : e + 1;
      value += t.slice(i, end);
      expands = true;
      i = end;
      continue;
    }
    if (c === "`") {
      const e = t.indexOf("`", i + 1);
      const end = e < 0 ? t.length : e + 1;
      value += t.slice(i, end);
      expands = true;
      i = end;
      continue;
    }
    if (c === "$") expands = true;
    value += c;
    i++;
  }
  return { value, end: Math.min(i + 1, t.length), expands };
}

/**
 * The word that starts at `start` (a character that is neither blank nor an operator's), up to the
 * next blank or operator outside quotes: its quotes and backslashes removed, expansions kept as written.
 */
function readWord(t: string, start: number): ShellWord {
  let i = start;
  let value = "";
  let expands = false;
  while (i < t.length && !isBlank(t[i]) && !isOpChar(t[i])) {
    const ch = t[i];
    if (ch === "\\") {
      if (t[i + 1] === "\n") {
        i += 2;
        continue;
      }
      if (i + 1 < t.length) value += t[i + 1];
      i += 2;
      continue;
    }
    if (ch === "'") {
      const e = t.indexOf("'", i + 1);
      const end = e < 0 ? t.length : e;
      value += t.slice(i + 1, end);
      i = Math.min(end + 1, t.length);
      continue;
    }
    if (ch === '"') {
      const d = skipDouble(t, i + 1);
      value += d.value;
      expands ||= d.expands;
      i = d.end;
      continue;
    }
    if (ch === "$" && t[i + 1] === "(") {
      const e = skipParens(t, i + 2);
      value += t.slice(i, e);
      expands = true;
      i = e;
      continue;
    }
    if (ch === "$" && t[i + 1] === "{") {
      const e = t.indexOf("}", i + 2);
      const end = e < 0 ? t.length : e + 1;
      value += t.slice(i, end);
      expands = true;
      i = end;
      continue;
    }
    if (ch === "`") {
      const e = t.indexOf("`", i + 1);
      const end = e < 0 ? t.length : e + 1;
      value += t.slice(i, end);
      expands = true;
      i = end;
      continue;
    }
    if (ch === "$") expands = true;
    value += ch;
    i++;
  }
  return { raw: t.slice(start, i), value, start, end: i, expands };
}

/**
 * Tokenizes the text from offset `from` (the whole text by default). With `list`, reading stops at
 * the first `)` that closes no `(` read since `from` (the end of an array assignment's list), and
 * `closed` says whether one was found.
 */
function tokenize(t: string, from = 0, list = false): { tokens: Token[]; comments: ShellComment[]; closed: boolean } {
  const tokens: Token[] = [];
  const comments: ShellComment[] = [];
  const heredocs: Array<{ delim: string; strip: boolean }> = [];
  let expectHeredoc: boolean | null = null; // strip-tabs flag of a `<<`/`<<-` whose delimiter comes next
  let depth = 0; // `(` read since `from` and not closed (with `list`)
  let i = from;
  while (i < t.length) {
    const c = t[i];
    if (isBlank(c)) {
      i++;
      continue;
    }
    if (c === "\\" && t[i + 1] === "\n") {
      i += 2;
      continue;
    }
    if (c === "#") {
      const e = t.indexOf("\n", i);
      const end = e < 0 ? t.length : e;
      comments.push({ start: i, end, text: t.slice(i, end).replace(/\r$/, "") });
      i = end;
      continue;
    }
    if (isOpChar(c)) {
      const op = OPS.find((o) => t.startsWith(o, i))!;
      if (list && op === "(") depth++;
      if (list && op === ")" && depth-- === 0) return { tokens, comments, closed: true };
      tokens.push({ kind: "op", op, start: i });
      i += op.length;
      if (op === "<<" || op === "<<-") expectHeredoc = op === "<<-";
      if (op === "\n" && heredocs.length) {
        // Skip each pending here-document body, line by line, up to its delimiter line.
        for (const h of heredocs) {
          while (i < t.length) {
            const e = t.indexOf("\n", i);
            const lineEnd = e < 0 ? t.length : e;
            let line = t.slice(i, lineEnd).replace(/\r$/, "");
            if (h.strip) line = line.replace(/^\t+/, "");
            i = e < 0 ? t.length : e + 1;
            if (line === h.delim) break;
          }
        }
        heredocs.length = 0;
      }
      continue;
    }
    const word = readWord(t, i);
    i = word.end;
    if (expectHeredoc !== null) {
      heredocs.push({ delim: word.value, strip: expectHeredoc });
      expectHeredoc = null;
    }
    tokens.push({ kind: "word", word });
  }
  return { tokens, comments, closed: false };
}

/**
 * The words of an array assignment's list (`NAME=(a "b c" $D)`) whose `(` is at offset `open` of
 * `text`, up to the `)` that closes it (newlines and comments between them skipped), as written
 * (shell.ts words: quotes removed, expansions kept); null when no `)` closes it or the list holds
 * an operator (a redirection, a `;`: no list bash accepts).
 */
export function arrayWords(text: string, open: number): ShellWord[] | null {
  if (text[open] !== "(") return null;
  const { tokens, closed } = tokenize(text, open + 1, true);
  if (!closed) return null;
  const words: ShellWord[] = [];
  for (const t of tokens) {
    if (t.kind === "word") words.push(t.word);
    else if (t.op !== "\n") return null;
  }
  return words;
}

/** `name() {` at its `(`: a function definition, not a call of `name` (`current` holds only `name`). */
const opensFunction = (current: ShellCommand | null, next: Token | undefined): boolean =>
  !!current && current.words.length === 1 && next?.kind === "op" && next.op === ")";

/**
 * The compound commands open at a point of a script (ShellCommand.enclosing): each simple command
 * shares the snapshot taken since the last change. A `(` that is no subshell (an array
 * assignment's `x=(a b)`) is kept as a group, so that its `)` closes it, and left out of snapshots.
 */
class Compounds {
  private stack: Array<ShellCompound | "group"> = [];
  private shot: readonly ShellCompound[] = [];
  /** A function's `()` was read: the next `{` opens its body. */
  functionNext = false;
  open(kind: ShellCompound | "group"): void {
    this.stack.push(kind);
    this.changed();
  }
  /** Closes the innermost open `kinds` and whatever was left open inside it; nothing when none is open. */
  close(...kinds: Array<ShellCompound | "group">): void {
    for (let i = this.stack.length - 1; i >= 0; i--)
      if (kinds.includes(this.stack[i])) {
        this.stack.length = i;
        this.changed();
        return;
      }
  }
  /** `if`/`fi`, `while`/`until`/`done`, `{`/`}` at the start of a command. */
  word(w: string): void {
    if (w === "if") this.open("if");
    else if (w === "fi") this.close("if");
    else if (w === "while" || w === "until") this.open("loop");
    else if (w === "done") this.close("loop");
    else if (w === "{") {
      this.open(this.functionNext ? "function" : "brace");
      this.functionNext = false;
    } else if (w === "}") this.close("brace", "function");
  }
  get snapshot(): readonly ShellCompound[] {
    return this.shot;
  }
  private changed(): void {
    this.shot = this.stack.filter((k): k is ShellCompound => k !== "group");
  }
}

/** Where the reader is between simple commands. */
interface Segment {
  /** Inside `for x in ...` / `case x in` up to the next separator. */
  skip: boolean;
  inCase: number;
  /** After `case ... in` or `;;`: words up to `)` are a pattern. */
  casePattern: boolean;
  compounds: Compounds;
}

/** A word read while `st.skip` or `st.casePattern` holds: what ends a `case`, or opens a `function name {` body. */
function skippedWord(w: ShellWord, st: Segment): void {
  if (st.casePattern && w.value === "esac") {
    st.inCase--;
    st.casePattern = false;
    st.compounds.close("case");
  }
  // `function name {`: the body opens within the skipped segment
  if (st.skip && st.compounds.functionNext && w.raw === "{") {
    st.compounds.word("{");
    st.skip = false;
  }
}

/** A word where a command would start: true (the state updated) when it is a reserved word and no command's. */
function reservedWord(w: ShellWord, st: Segment): boolean {
  if (w.value === "esac" && !w.expands) {
    st.inCase = Math.max(0, st.inCase - 1);
    st.compounds.close("case");
    return true;
  }
  if (w.raw !== w.value) return false;
  if (PREFIX_WORDS.has(w.value)) {
    st.compounds.word(w.value);
    return true;
  }
  if (w.value === "for" || w.value === "select" || w.value === "function") {
    if (w.value === "function") st.compounds.functionNext = true;
    else st.compounds.open("loop");
    st.skip = true;
    return true;
  }
  if (w.value === "case") {
    st.inCase++;
    st.compounds.open("case");
    st.skip = true;
    st.casePattern = true;
    return true;
  }
  return false;
}

/**
 * The simple commands and comments of a shell script. Never throws: an unclosed quote runs to the
 * end of the text, as the shell would report it.
 */
export function parseShell(src: SourceText): ShellScript {
  const { tokens, comments } = tokenize(src.text);
  const commands: ShellCommand[] = [];
  const compounds = new Compounds();
  const st: Segment = { skip: false, inCase: 0, casePattern: false, compounds };
  let current: ShellCommand | null = null;
  const close = () => {
    if (current && (current.words.length || current.assignments.length)) commands.push(current);
    current = null;
  };
  for (let k = 0; k < tokens.length; k++) {
    const tok = tokens[k];
    if (tok.kind === "op") {
      if (REDIRECTS.has(tok.op) || tok.op === "<<" || tok.op === "<<-") {
        if (tokens[k + 1]?.kind === "word") k++; // the redirection's target is no argument
        continue;
      }
      if (SEPARATORS.has(tok.op)) {
        if (tok.op === ")" && st.casePattern) {
          st.casePattern = false;
          current = null;
          continue;
        }
        if (tok.op === ";;" || tok.op === ";&") st.casePattern = st.inCase > 0;
        const next = tokens[k + 1];
        if (tok.op === "(" && (opensFunction(current, next) || (!current && next?.kind === "op" && next.op === ")"))) {
          // `name()` or `function name()`: the body follows
          compounds.functionNext = true;
          current = null;
          k++;
          continue;
        }
        if (tok.op === "(" && !st.casePattern) compounds.open(current ? "group" : "subshell");
        else if (tok.op === ")") compounds.close("subshell", "group");
        close();
        st.skip = false;
      }
      continue;
    }
    const w = tok.word;
    if (st.skip || st.casePattern) {
      skippedWord(w, st);
      continue;
    }
    if (!current) {
      if (reservedWord(w, st)) continue;
      compounds.functionNext = false; // a body that is no `{ ... }` (`f() ( ... )`) is not followed
      current = { assignments: [], words: [], start: w.start, end: w.end, enclosing: compounds.snapshot };
    }
    // A leading digit string glued to a redirection (`2>`) is a file descriptor, not a word.
    const next = tokens[k + 1];
    if (/^[0-9]+$/.test(w.raw) && next?.kind === "op" && REDIRECTS.has(next.op) && next.start === w.end) continue;
    const eq = w.raw.indexOf("=");
    if (!current.words.length && eq > 0 && isName(w.raw.slice(0, eq))) {
      const name = w.raw.slice(0, eq);
      current.assignments.push({ name, value: w.value.slice(name.length + 1), word: w });
    } else {
      current.words.push(w);
    }
    current.end = w.end;
  }
  close();
  const first = tokens.find((t) => t.kind === "word" || t.op !== "\n");
  return { commands, comments, firstToken: first ? (first.kind === "word" ? first.word.start : first.start) : null };
}

/**
 * The words a command gives the export attribute to, options included: those after `export`, or
 * after `declare`/`typeset` with an `-x` option (bash's builtins that export, "Bash Builtin
 * Commands"); null for any other command.
 */
export function exportOperands(c: ShellCommand): readonly ShellWord[] | null {
  const head = c.words[0]?.value;
  const exporting =
    head === "export" ||
    ((head === "declare" || head === "typeset") && c.words.some((w) => /^-[a-zA-Z]*x/.test(w.value)));
  return exporting ? c.words.slice(1) : null;
}

/** Whether a word or an assignment of `c` expands the variable `name` (`$name`, `${name}`, `${name:-x}`). */
export function expandsVariable(c: ShellCommand, name: string): boolean {
  const uses = (w: ShellWord) => w.expands && (w.raw.includes(`$${name}`) || w.raw.includes(`\${${name}`));
  return c.words.some(uses) || c.assignments.some((a) => uses(a.word));
}
