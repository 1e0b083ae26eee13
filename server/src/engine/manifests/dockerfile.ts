/**
 * Dockerfiles through `dockerfile-ast` (the parser of the Dockerfile language server): the
 * variables each `ENV` instruction sets (`ENV K=V`, `ENV K V`, several pairs, line continuations,
 * the `# escape=` directive), the edits that remove one, and the full-line comments. Positions
 * come from the parser's LSP ranges (UTF-16).
 */
import { DockerfileParser, type Dockerfile, type Property } from "dockerfile-ast";
import type { SourceText } from "./source";
import type { Range, TextEdit } from "../types";

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
}

/** Parses a Dockerfile; never throws (a parser failure gives no facts). */
export function dockerfileFacts(src: SourceText): DockerfileFacts {
  let df: Dockerfile;
  try {
    df = DockerfileParser.parse(src.text);
  } catch {
    return { env: [], comments: [], instructions: [] };
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
      else if (i + 1 < props.length) removal = [{ range: { start: range.start, end: props[i + 1].getRange().start }, newText: "" }];
      else removal = [{ range: { start: props[i - 1].getRange().end, end: range.end }, newText: "" }];
      env.push({ name: p.getName(), value: p.getValue(), range, instruction: whole, removal });
    });
  }
  const directives = new Set(df.getDirectives().map((d) => d.getRange().start.line));
  const comments = df.getComments()
    .map((c) => c.getRange())
    .filter((r) => !directives.has(r.start.line))
    .map((r) => ({ line: r.start.line, column: r.start.character, text: src.text.slice(src.lineStart(r.start.line) + r.start.character, src.lineEnd(r.start.line)) }));
  return { env, comments, instructions };
}
