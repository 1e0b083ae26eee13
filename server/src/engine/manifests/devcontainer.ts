/**
 * A Dev Container configuration (`devcontainer.json`, JSON with comments), as far as the manifest
 * rules read it: the `runArgs` strings, which the Dev Containers tools pass to `docker run` as
 * they are, one argument each, with no shell between (GPU072), and the comments (`// noqa`).
 */
import { createScanner, parseTree, SyntaxKind, type Node as JsonNode, type ParseError } from "jsonc-parser";

/** A string of `runArgs`: its value (escapes resolved) and the offsets of the JSON string, quotes included. */
export interface RunArg {
  value: string;
  start: number;
  end: number;
}

/** What the rules read of a devcontainer.json. */
export interface DevcontainerFacts {
  /** The strings of the top-level `runArgs` array, in order; a non-string item ends the list (its place is unknown). */
  runArgs: RunArg[];
}

/** JSON with comments and trailing commas, as the Dev Containers tools read it. */
const OPTIONS = { allowTrailingComma: true, disallowComments: false };

/** Reads the facts of a devcontainer.json; never throws (a text that does not parse has no runArgs). */
export function devcontainerFacts(text: string): DevcontainerFacts {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, OPTIONS);
  const runArgs: RunArg[] = [];
  if (root?.type !== "object") return { runArgs };
  const prop = root.children?.find((p) => p.children?.[0]?.value === "runArgs");
  const list: JsonNode | undefined = prop?.children?.[1];
  if (list?.type !== "array") return { runArgs };
  for (const item of list.children ?? []) {
    if (item.type !== "string") break;
    runArgs.push({ value: String(item.value), start: item.offset, end: item.offset + item.length });
  }
  return { runArgs };
}

/** The number of syntax errors of a devcontainer.json (a fix may not add any). */
export function devcontainerErrorCount(text: string): number {
  const errors: ParseError[] = [];
  parseTree(text, errors, OPTIONS);
  return errors.length;
}

/** The comments of a devcontainer.json (`// ...` and `/* ... *\/`): offset and text. */
export function devcontainerComments(text: string): { offset: number; text: string }[] {
  const out: { offset: number; text: string }[] = [];
  const scanner = createScanner(text, false);
  for (let k = scanner.scan(); k !== SyntaxKind.EOF; k = scanner.scan()) {
    if (k === SyntaxKind.LineCommentTrivia || k === SyntaxKind.BlockCommentTrivia)
      out.push({
        offset: scanner.getTokenOffset(),
        text: text.slice(scanner.getTokenOffset(), scanner.getTokenOffset() + scanner.getTokenLength()),
      });
  }
  return out;
}
