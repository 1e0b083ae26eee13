/**
 * Dockerfiles through `dockerfile-ast` (the parser of the Dockerfile language server): the
 * variables each `ENV` instruction sets (`ENV K=V`, `ENV K V`, several pairs, line continuations,
 * the `# escape=` directive), the edits that remove one, and the full-line comments. Positions
 * come from the parser's LSP ranges (UTF-16).
 */
import { DockerfileParser, type Dockerfile, type Property } from "dockerfile-ast";
import type { SourceText } from "./source";
import type { Range, TextEdit } from "../types";
import type { ShellWord } from "./shell";

/** One variable set by an `ENV` instruction. */
export interface DockerEnv {
  name: string;
  /** The value with quotes and escapes resolved (`${VAR}` references kept as written); null for none. */
  value: string | null;
  /** The `K=V` (or `K V`) text. */
  range: Range;
  /** The whole `ENV` instruction (several lines with continuations). */
  instruction: Range;
  /** Edits removing the variable: the whole instruction when it sets only this one. */
  removal: TextEdit[];
}

/** A full-line comment (`# ...`), parser directives excluded. */
export interface DockerComment {
  line: number;
  /** Column of the `#`. */
  column: number;
  /** The comment's text from the `#`. */
  text: string;
}

/** What the rules and `# noqa` need from a Dockerfile. */
export interface DockerfileFacts {
  env: DockerEnv[];
  comments: DockerComment[];
  /** Line ranges (0-based, inclusive) of every instruction, in order. */
  instructions: Array<{ first: number; last: number; column: number }>;
  /** What the image runs (the last stage's `ENTRYPOINT` and `CMD`); null when it sets neither. */
  run: DockerRun | null;
}

/**
 * The command the image runs: "If CMD is used to provide default arguments for the ENTRYPOINT
 * instruction, both the CMD and ENTRYPOINT instructions should be specified in the exec form"
 * (Dockerfile reference, https://docs.docker.com/reference/dockerfile/#cmd). An exec-form
 * `ENTRYPOINT` is followed by the exec-form `CMD`'s words; a shell-form one runs alone; without
 * `ENTRYPOINT` the `CMD` runs (a shell-form `CMD` under `/bin/sh -c`).
 */
export interface DockerRun {
  /** The exec-form words (JSON strings), offsets into the Dockerfile; empty for the shell form. */
  argv: ShellWord[];
  /** The shell form: the text from `start` to `end` is a shell command line. */
  shellForm: boolean;
  start: number;
  end: number;
  /** `CMD` or `ENTRYPOINT`: the instruction that names the program. */
  keyword: string;
  /** 0-based line of that instruction, and of the last stage's `FROM` (0 when none). */
  line: number;
  stageLine: number;
}

/** Parses a Dockerfile; never throws (a parser failure gives no facts). */
export function dockerfileFacts(src: SourceText): DockerfileFacts {
  let df: Dockerfile;
  try {
    df = DockerfileParser.parse(src.text);
  } catch {
    return { env: [], comments: [], instructions: [], run: null };
  }
  const env: DockerEnv[] = [];
  const instructions: DockerfileFacts["instructions"] = [];
  for (const ins of df.getInstructions()) {
    const r = ins.getRange();
    instructions.push({ first: r.start.line, last: r.end.line, column: r.start.character });
  }
  for (const ins of df.getENVs()) {
    const props: Property[] = ins.getProperties();
    const whole = ins.getRange();
    props.forEach((p, i) => {
      const range = p.getRange();
      let removal: TextEdit[];
      if (props.length === 1) removal = [{ range: src.wholeLines(whole.start.line, whole.end.line), newText: "" }];
      else if (i + 1 < props.length)
        removal = [{ range: { start: range.start, end: props[i + 1].getRange().start }, newText: "" }];
      else removal = [{ range: { start: props[i - 1].getRange().end, end: range.end }, newText: "" }];
      env.push({ name: p.getName(), value: p.getValue(), range, instruction: whole, removal });
    });
  }
  const directives = new Set(df.getDirectives().map((d) => d.getRange().start.line));
  const comments = df
    .getComments()
    .map((c) => c.getRange())
    .filter((r) => !directives.has(r.start.line))
    .map((r) => ({
      line: r.start.line,
      column: r.start.character,
      text: src.text.slice(src.lineStart(r.start.line) + r.start.character, src.lineEnd(r.start.line)),
    }));
  return { env, comments, instructions, run: runOf(src, df) };
}

/** The last stage's ENTRYPOINT/CMD (see {@link DockerRun}); null when none. */
function runOf(src: SourceText, df: Dockerfile): DockerRun | null {
  const froms = df.getFROMs();
  const stageLine = froms.length ? froms[froms.length - 1].getRange().start.line : 0;
  const inStage = <T extends { getRange(): { start: { line: number } } }>(xs: T[]) =>
    xs.filter((x) => x.getRange().start.line >= stageLine).pop();
  const entry = inStage(df.getENTRYPOINTs());
  const cmd = inStage(df.getCMDs());
  const offset = (p: { line: number; character: number }) => src.lineStart(p.line) + p.character;
  const piece = (ins: NonNullable<typeof cmd> | NonNullable<typeof entry>) => {
    const json = ins.getJSONStrings();
    const args = ins.getArgumentsRange();
    if (json.length) {
      return {
        exec: true,
        words: json.map((j): ShellWord => {
          const r = j.getRange();
          const start = offset(r.start);
          const end = offset(r.end);
          return { raw: src.text.slice(start, end), value: j.getJSONValue(), start, end, expands: false };
        }),
        start: 0,
        end: 0,
      };
    }
    if (!args) return null;
    return { exec: false, words: [], start: offset(args.start), end: offset(args.end) };
  };
  const e = entry ? piece(entry) : null;
  const c = cmd ? piece(cmd) : null;
  const line = (entry ?? cmd)?.getRange().start.line ?? 0;
  if (e) {
    if (!e.exec)
      return { argv: [], shellForm: true, start: e.start, end: e.end, keyword: "ENTRYPOINT", line, stageLine };
    return {
      argv: [...e.words, ...(c?.exec ? c.words : [])],
      shellForm: false,
      start: 0,
      end: 0,
      keyword: "ENTRYPOINT",
      line: Math.max(line, cmd?.getRange().start.line ?? 0),
      stageLine,
    };
  }
  if (!c) return null;
  return c.exec
    ? { argv: c.words, shellForm: false, start: 0, end: 0, keyword: "CMD", line, stageLine }
    : { argv: [], shellForm: true, start: c.start, end: c.end, keyword: "CMD", line, stageLine };
}
