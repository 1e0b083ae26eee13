/**
 * Editor helpers of the server that need no parse: `# noqa` comment edits and lookups on one line,
 * and the Markdown of a rule's documentation for hovers.
 */
import type { Position, Range, RuleMeta, TextEdit } from "./engine/types";
import { parsePython } from "./engine/python/parser";

/** The text of 0-based `line` (without its line break). */
function lineText(text: string, line: number): string | null {
  const lines = text.split(/\r\n|\r|\n/);
  return line < lines.length ? lines[line] : null;
}

/**
 * The comment on 0-based `line` (tree-sitter's `comment` node, so `#` inside strings never counts):
 * its start column and text, or null. Requires the parser to be loaded.
 */
export function commentOnLine(text: string, line: number): { column: number; text: string } | null {
  const tree = parsePython(text);
  try {
    for (const c of tree.rootNode.descendantsOfType("comment")) {
      if (c && c.startPosition.row === line) return { column: c.startPosition.column, text: c.text };
    }
    return null;
  } finally {
    tree.delete();
  }
}

const NOQA = /#\s*noqa(?::\s*([A-Za-z]+[0-9]+(?:\s*,\s*[A-Za-z]+[0-9]+)*))?/;

/**
 * The edit that suppresses `code` on `line`: appends `  # noqa: CODE`, or extends an existing
 * `# noqa: A, B` list (found in the line's comment node). Null when the line already suppresses it
 * (bare `# noqa` or the code listed).
 */
export function noqaEdit(text: string, line: number, code: string): TextEdit | null {
  const l = lineText(text, line);
  if (l === null) return null;
  const comment = commentOnLine(text, line);
  const found = comment ? NOQA.exec(comment.text) : null;
  const m = found ? Object.assign(found, { index: found.index + comment!.column }) : null;
  if (m) {
    if (!m[1]) return null;
    const codes = m[1].split(/\s*,\s*/).map((c) => c.toUpperCase());
    if (codes.includes(code)) return null;
    const start = m.index;
    return { range: { start: { line, character: start }, end: { line, character: start + m[0].length } }, newText: `# noqa: ${[...codes, code].join(", ")}` };
  }
  const end = l.length;
  const trimmedEnd = l.trimEnd().length;
  return { range: { start: { line, character: trimmedEnd }, end: { line, character: end } }, newText: `  # noqa: ${code}` };
}

/** The rule code under `position` inside a `# noqa: ...` comment, with its range. */
export function noqaCodeAt(text: string, position: Position): { code: string; range: Range } | null {
  const comment = commentOnLine(text, position.line);
  if (!comment) return null;
  const m = NOQA.exec(comment.text);
  if (!m || !m[1]) return null;
  const listStart = comment.column + m.index + m[0].length - m[1].length;
  let at = listStart;
  for (const part of m[1].split(",")) {
    const lead = part.length - part.trimStart().length;
    const code = part.trim();
    const s = at + lead;
    if (position.character >= s && position.character <= s + code.length) {
      return { code: code.toUpperCase(), range: { start: { line: position.line, character: s }, end: { line: position.line, character: s + code.length } } };
    }
    at += part.length + 1;
  }
  return null;
}

/** A rule's documentation as Markdown (hover, docs pages). */
export function ruleMarkdown(meta: RuleMeta, href: string): string {
  return [
    `**${meta.code}** \`${meta.name}\` · ${meta.severity}${meta.fixable ? " · fixable" : ""}`,
    "", meta.docs.what, "", `**Why is this bad?** ${meta.docs.why}`, "",
    "**Example**", `\`\`\`${meta.docs.language ?? "python"}`, meta.docs.example.trimEnd(), "```", "",
    "**Use instead**", `\`\`\`${meta.docs.language ?? "python"}`, meta.docs.fix.trimEnd(), "```", "",
    `[Full documentation](${href})`,
  ].join("\n");
}
