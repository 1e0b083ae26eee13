/**
 * Editor helpers of the server: `# noqa` comment edits and lookups on one line (from the kept
 * syntax trees of the document's last lint when they are of its text, else from a parse), and the
 * Markdown of a rule's documentation for hovers.
 */
import type { Position, Range, RuleMeta, TextEdit } from "./engine/types";
import { parsePython } from "./engine/python/parser";
import type { ModuleTrees } from "./engine/python/moduleTrees";

/** The text of 0-based `line` (without its line break). */
function lineText(text: string, line: number): string | null {
  const lines = text.split(/\r\n|\r|\n/);
  return line < lines.length ? lines[line] : null;
}

/**
 * The comment on 0-based `line` (tree-sitter's `comment` node, so `#` inside strings never counts):
 * its start column and text, or null. `trees`: the parse of `text` at hand (the server's kept trees
 * of this document version), queried on that line only; without them the text is parsed (the
 * parser must be loaded). A line without `#` has no comment: no parse.
 */
export function commentOnLine(
  text: string,
  line: number,
  trees?: ModuleTrees,
): { column: number; text: string } | null {
  if (!lineText(text, line)?.includes("#")) return null;
  if (trees) {
    for (const c of trees.descendantsOfType("comment", { row: line, column: 0 }, { row: line + 1, column: 0 })) {
      if (c.startPosition.row === line) return { column: c.startPosition.column, text: c.text };
    }
    return null;
  }
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
 * (bare `# noqa` or the code listed). `trees`: as {@link commentOnLine}'s.
 */
export function noqaEdit(text: string, line: number, code: string, trees?: ModuleTrees): TextEdit | null {
  const l = lineText(text, line);
  if (l === null) return null;
  const comment = commentOnLine(text, line, trees);
  const found = comment ? NOQA.exec(comment.text) : null;
  const m = found ? Object.assign(found, { index: found.index + comment!.column }) : null;
  if (m) {
    if (!m[1]) return null;
    const codes = m[1].split(/\s*,\s*/).map((c) => c.toUpperCase());
    if (codes.includes(code)) return null;
    const start = m.index;
    return {
      range: { start: { line, character: start }, end: { line, character: start + m[0].length } },
      newText: `# noqa: ${[...codes, code].join(", ")}`,
    };
  }
  const end = l.length;
  const trimmedEnd = l.trimEnd().length;
  return {
    range: { start: { line, character: trimmedEnd }, end: { line, character: end } },
    newText: `  # noqa: ${code}`,
  };
}

/** The rule code under `position` inside a `# noqa: ...` comment, with its range. */
export function noqaCodeAt(
  text: string,
  position: Position,
  trees?: ModuleTrees,
): { code: string; range: Range } | null {
  if (!lineText(text, position.line)?.includes("noqa")) return null; // NOQA needs it in the line's comment
  const comment = commentOnLine(text, position.line, trees);
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
      return {
        code: code.toUpperCase(),
        range: {
          start: { line: position.line, character: s },
          end: { line: position.line, character: s + code.length },
        },
      };
    }
    at += part.length + 1;
  }
  return null;
}

/** A rule's documentation as Markdown (hover, docs pages). */
export function ruleMarkdown(meta: RuleMeta, href: string): string {
  return [
    `**${meta.code}** \`${meta.name}\` · ${meta.severity}${meta.fixable ? " · fixable" : ""}`,
    "",
    meta.docs.what,
    "",
    `**Why is this bad?** ${meta.docs.why}`,
    "",
    "**Example**",
    `\`\`\`${meta.docs.language ?? "python"}`,
    meta.docs.example.trimEnd(),
    "```",
    "",
    "**Use instead**",
    `\`\`\`${meta.docs.language ?? "python"}`,
    meta.docs.fix.trimEnd(),
    "```",
    "",
    `[Full documentation](${href})`,
  ].join("\n");
}
