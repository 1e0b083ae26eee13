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

/** A simple command: its assignments, its words (redirections left out), and where it is. */
export interface ShellCommand {
  assignments: ShellAssignment[];
  words: ShellWord[];
  start: number;
  end: number;
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
const REDIRECTS = new Set(["&>", ">>", ">&", "<&", ">|", "<>", "<", ">"]);
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

/** Tokenizes the whole text. */
function tokenize(t: string): { tokens: Token[]; comments: ShellComment[] } {
  const tokens: Token[] = [];
  const comments: ShellComment[] = [];
  const heredocs: Array<{ delim: string; strip: boolean }> = [];
  let expectHeredoc: boolean | null = null; // strip-tabs flag of a `<<`/`<<-` whose delimiter comes next
  let i = 0;
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
  return { tokens, comments };
}

/** `name() {` at its `(`: a function definition, not a call of `name` (`current` holds only `name`). */
const opensFunction = (current: ShellCommand | null, next: Token | undefined): boolean =>
  !!current && current.words.length === 1 && next?.kind === "op" && next.op === ")";

/**
 * The simple commands and comments of a shell script. Never throws: an unclosed quote runs to the
 * end of the text, as the shell would report it.
 */
export function parseShell(src: SourceText): ShellScript {
  const { tokens, comments } = tokenize(src.text);
  const commands: ShellCommand[] = [];
  let current: ShellCommand | null = null;
  let skipSegment = false; // inside `for x in ...` / `case x in` up to the next separator
  let inCase = 0;
  let casePattern = false; // after `case ... in` or `;;`: words up to `)` are a pattern
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
        if (tok.op === ")" && casePattern) {
          casePattern = false;
          current = null;
          continue;
        }
        if (tok.op === ";;" || tok.op === ";&") casePattern = inCase > 0;
        if (tok.op === "(" && opensFunction(current, tokens[k + 1])) {
          current = null;
          k++;
          continue;
        }
        close();
        skipSegment = false;
      }
      continue;
    }
    const w = tok.word;
    if (skipSegment || casePattern) {
      if (casePattern && w.value === "esac") {
        inCase--;
        casePattern = false;
      }
      continue;
    }
    if (!current) {
      if (w.value === "esac" && !w.expands) {
        inCase = Math.max(0, inCase - 1);
        continue;
      }
      if (PREFIX_WORDS.has(w.value) && w.raw === w.value) continue;
      if ((w.value === "for" || w.value === "select" || w.value === "function") && w.raw === w.value) {
        skipSegment = true;
        continue;
      }
      if (w.value === "case" && w.raw === w.value) {
        inCase++;
        skipSegment = true;
        casePattern = true;
        continue;
      }
      current = { assignments: [], words: [], start: w.start, end: w.end };
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
