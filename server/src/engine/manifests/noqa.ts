/**
 * `# noqa` in manifests. Comments are found by the parsers, never by searching the text for `#`:
 * the `yaml` lexer's comment tokens, and `dockerfile-ast`'s comment lines.
 *
 * - YAML: `# noqa: GPU019` at the end of the line where the diagnostic starts (as in Python).
 * - Dockerfile: a `#` starts a comment only at the start of a line (at the end of `ENV K=V` it
 *   would be part of the value or a syntax error), so `# noqa: GPU019` goes on its own line
 *   directly above the instruction (hadolint's `# hadolint ignore=` convention) and covers every
 *   line of it, continuations included; inside a continued instruction it covers the next line.
 */
import { Lexer, CST } from "yaml";
import type { Position, Range, TextEdit } from "../types";
import type { ManifestKind } from "./files";
import { SourceText } from "./source";
import { dockerfileFacts, type DockerfileFacts } from "./dockerfile";
import { parseShell } from "./shell";
import { devcontainerComments } from "./devcontainer";

const NOQA = /#\s*noqa(?::\s*([A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?/i;

/** Codes of a noqa comment: null for a bare `# noqa` (every code), undefined when it is no noqa comment. */
function noqaCodes(comment: string): Set<string> | null | undefined {
  const m = NOQA.exec(comment);
  if (!m) return undefined;
  return m[1]
    ? new Set(
        m[1]
          .split(/[\s,]+/)
          .filter(Boolean)
          .map((s) => s.toUpperCase()),
      )
    : null;
}

/** A comment: 0-based line, column of its `#`, text from the `#` to the end of the line. */
interface LineComment {
  line: number;
  column: number;
  text: string;
}

/** Comments of a shell script, from its tokenizer (a `#` inside quotes, a word or a here-document is none). */
function shellComments(src: SourceText): LineComment[] {
  return parseShell(src).comments.map((c) => {
    const p = src.position(c.start);
    return { line: p.line, column: p.character, text: c.text };
  });
}

/**
 * The `//` comments of a devcontainer.json (JSON with comments), from jsonc-parser's scanner, with the
 * `//` read as ` #` (same length, so columns hold): `// noqa: GPU072` at the end of the line.
 */
function devcontainerLineComments(src: SourceText): LineComment[] {
  return devcontainerComments(src.text)
    .filter((c) => c.text.startsWith("//"))
    .map((c) => {
      const p = src.position(c.offset);
      return { line: p.line, column: p.character, text: ` #${c.text.slice(2)}` };
    });
}

/** The line comments of a YAML file, shell script or devcontainer.json (the `# noqa` carriers: at the end of the line). */
const lineComments = (src: SourceText, kind: ManifestKind): LineComment[] =>
  kind === "jobscript" || kind === "dotenv"
    ? shellComments(src)
    : kind === "devcontainer"
      ? devcontainerLineComments(src)
      : yamlComments(src);

/** Comments of a YAML text, from the lexer's tokens (a `#` inside a string or block scalar is none). */
function yamlComments(src: SourceText): LineComment[] {
  const out: LineComment[] = [];
  let offset = 0;
  try {
    for (const tok of new Lexer().lex(src.text)) {
      // The lexer's control tokens (document start, scalar start, flow end) take no source text.
      if (tok === CST.DOCUMENT || tok === CST.SCALAR || tok === CST.FLOW_END) continue;
      if (CST.tokenType(tok) === "comment") {
        const p = src.position(offset);
        out.push({ line: p.line, column: p.character, text: tok });
      }
      offset += tok.length;
    }
  } catch {
    // A lexer failure leaves the comments found so far.
  }
  return out;
}

const merge = (a: Set<string> | null | undefined, b: Set<string> | null): Set<string> | null =>
  a === undefined ? b : a === null || b === null ? null : new Set([...a, ...b]);

/** The Dockerfile's noqa comments that cover each instruction line. */
function dockerNoqa(facts: DockerfileFacts): Map<number, Set<string> | null> {
  const out = new Map<number, Set<string> | null>();
  const byLine = new Map(facts.comments.map((c) => [c.line, c]));
  for (const ins of facts.instructions) {
    let codes: Set<string> | null | undefined;
    for (let l = ins.first - 1; byLine.has(l); l--) {
      const c = noqaCodes(byLine.get(l)!.text);
      if (c !== undefined) codes = merge(codes, c);
    }
    for (let l = ins.first; l <= ins.last; l++) {
      let lineCodes = codes;
      const inside = byLine.get(l - 1);
      if (l > ins.first && inside) {
        const c = noqaCodes(inside.text);
        if (c !== undefined) lineCodes = merge(lineCodes, c);
      }
      if (lineCodes !== undefined) out.set(l, lineCodes);
    }
  }
  return out;
}

/**
 * `# noqa` by 0-based line of a manifest: null means every code, else the listed codes.
 * @param dockerfile the already parsed Dockerfile facts, to avoid parsing twice.
 */
export function manifestNoqaLines(
  text: string,
  kind: ManifestKind,
  dockerfile?: DockerfileFacts | null,
): Map<number, Set<string> | null> {
  const src = new SourceText(text);
  if (kind === "dockerfile") return dockerNoqa(dockerfile ?? dockerfileFacts(src));
  const out = new Map<number, Set<string> | null>();
  for (const c of lineComments(src, kind)) {
    const codes = noqaCodes(c.text);
    if (codes !== undefined) out.set(c.line, merge(out.get(c.line), codes));
  }
  return out;
}

/** The comment that holds the noqa codes for `line`, or null (YAML: on the line; Dockerfile: above its instruction). */
function noqaCommentFor(
  src: SourceText,
  kind: ManifestKind,
  line: number,
): { comment: LineComment | null; insertAt: Position; indent: string } | null {
  if (kind !== "dockerfile") {
    const comment = lineComments(src, kind).find((c) => c.line === line) ?? null;
    return { comment, insertAt: src.position(src.lineEnd(line)), indent: "" };
  }
  const facts = dockerfileFacts(src);
  const ins = facts.instructions.find((i) => i.first <= line && line <= i.last);
  if (!ins) return null;
  const above = facts.comments.find((c) => c.line === ins.first - 1 && noqaCodes(c.text) !== undefined) ?? null;
  return { comment: above, insertAt: { line: ins.first, character: 0 }, indent: " ".repeat(ins.column) };
}

/**
 * The edit that suppresses `code` for a diagnostic starting on `line`: YAML appends
 * `  # noqa: CODE` to the line; a Dockerfile gets a `# noqa: CODE` line above the instruction. An
 * existing `# noqa: A` there is extended. A shell (job) script line is treated as YAML, except that
 * a line continued with a trailing `\` gets none: a comment after it would end the command there.
 * Null when already suppressed or not possible.
 */
export function manifestNoqaEdit(text: string, kind: ManifestKind, line: number, code: string): TextEdit | null {
  const src = new SourceText(text);
  if (line >= src.starts.length) return null;
  if (kind === "jobscript" && text.slice(src.lineStart(line), src.lineEnd(line)).endsWith("\\")) return null;
  // A devcontainer.json's `// noqa` is read, not written (no quick fix adds one).
  if (kind === "devcontainer") return null;
  const at = noqaCommentFor(src, kind, line);
  if (!at) return null;
  const m = at.comment ? NOQA.exec(at.comment.text) : null;
  if (at.comment && m) {
    if (!m[1]) return null;
    const codes = m[1]
      .split(/[\s,]+/)
      .filter(Boolean)
      .map((c) => c.toUpperCase());
    if (codes.includes(code)) return null;
    const start = at.comment.column + m.index;
    return {
      range: {
        start: { line: at.comment.line, character: start },
        end: { line: at.comment.line, character: start + m[0].length },
      },
      newText: `# noqa: ${[...codes, code].join(", ")}`,
    };
  }
  if (kind === "dockerfile")
    return { range: { start: at.insertAt, end: at.insertAt }, newText: `${at.indent}# noqa: ${code}${src.eol}` };
  const lineText = text.slice(src.lineStart(line), src.lineEnd(line));
  const trimmed = lineText.trimEnd().length;
  return {
    range: { start: { line, character: trimmed }, end: { line, character: lineText.length } },
    newText: `  # noqa: ${code}`,
  };
}

/** The rule code under `position` inside a manifest's `# noqa: ...` comment, with its range. */
export function manifestNoqaCodeAt(
  text: string,
  kind: ManifestKind,
  position: Position,
): { code: string; range: Range } | null {
  const src = new SourceText(text);
  const comments = kind === "dockerfile" ? dockerfileFacts(src).comments : lineComments(src, kind);
  const comment = comments.find((c) => c.line === position.line);
  if (!comment) return null;
  const m = NOQA.exec(comment.text);
  if (!m || !m[1]) return null;
  let at = comment.column + m.index + m[0].length - m[1].length;
  for (const part of m[1].split(/([\s,]+)/)) {
    if (part && !/^[\s,]+$/.test(part) && position.character >= at && position.character <= at + part.length) {
      return {
        code: part.toUpperCase(),
        range: {
          start: { line: position.line, character: at },
          end: { line: position.line, character: at + part.length },
        },
      };
    }
    at += part.length;
  }
  return null;
}
