/**
 * YAML through the `yaml` package (parseAllDocuments with source tokens): lookups on mappings and
 * the text edits that manifest fixes need (remove a pair or a sequence item with its lines, add a
 * pair to a block or flow mapping, replace a scalar), computed from node ranges so the rest of the
 * file keeps its formatting and comments.
 */
import { parseAllDocuments, isMap, isSeq, isScalar, isPair, isCollection, type Document, type Node, type Pair, type YAMLMap, type YAMLSeq } from "yaml";
import type { SourceText } from "./source";
import type { TextEdit } from "../types";

/** One document of a YAML stream. */
export interface YamlDocument {
  /** 0-based index of the document in the file. */
  index: number;
  doc: Document.Parsed;
  /** Whether the document has YAML errors (such documents are not linted). */
  broken: boolean;
}

/** Parses every document of a YAML stream; never throws. */
export function parseYaml(text: string): YamlDocument[] {
  try {
    return parseAllDocuments(text, { prettyErrors: false, uniqueKeys: false })
      .map((doc, index) => ({ index, doc: doc as Document.Parsed, broken: doc.errors.length > 0 }));
  } catch {
    return [];
  }
}

/** The number of YAML errors in a text (to check that a fix does not break the file). */
export function yamlErrorCount(text: string): number {
  return parseYaml(text).reduce((n, d) => n + d.doc.errors.length, 0);
}

/** A mapping's pair whose key is the plain string `key`, or null. */
export function pairOf(map: unknown, key: string): Pair<Node, Node | null> | null {
  if (!isMap(map)) return null;
  for (const p of map.items) {
    if (isScalar(p.key) && String(p.key.value) === key) return p as Pair<Node, Node | null>;
  }
  return null;
}

/** The value node of `key` in a mapping, or null. */
export function valueOf(map: unknown, key: string): Node | null {
  return pairOf(map, key)?.value ?? null;
}

/** The value at a path of keys, or null. */
export function valueAt(node: unknown, path: readonly string[]): Node | null {
  let n: unknown = node;
  for (const k of path) {
    n = valueOf(n, k);
    if (!n) return null;
  }
  return n as Node;
}

/** A scalar's value as a string (numbers and booleans in their source spelling), else null. */
export function scalarText(node: unknown): string | null {
  if (!isScalar(node) || node.value === null || node.value === undefined) return null;
  if (typeof node.value === "string") return node.value;
  return node.source ?? String(node.value);
}

/** Offset just after the last character that belongs to `node` (comments and trailing line breaks excluded). */
export function contentEnd(node: Node | Pair): number {
  if (isPair(node)) {
    const keyEnd = (node.key as Node | null)?.range?.[1] ?? 0;
    const v = node.value as Node | null;
    if (!v || !v.range || (isScalar(v) && v.range[0] === v.range[1])) return keyEnd;
    return Math.max(keyEnd, contentEnd(v));
  }
  if (isCollection(node) && !node.flow && node.items.length) return contentEnd(node.items[node.items.length - 1] as Node | Pair);
  return node.range?.[1] ?? 0;
}

/** Start offset of a pair (its key). */
export function pairStart(pair: Pair): number {
  return (pair.key as Node | null)?.range?.[0] ?? (pair.value as Node | null)?.range?.[0] ?? 0;
}

/**
 * Start offset of the i-th item of a sequence: in block style its `-`, found from the item back
 * across blanks, line breaks and comments (only those may stand between an indicator and its
 * item); the item itself in flow style. Null when something else comes first (a tag or an anchor
 * before the item): no removal is offered. (Read from the text, not from source tokens: keeping
 * every token cost a third of the parse of a YAML stream.)
 */
export function itemStart(text: string, seq: YAMLSeq, i: number): number | null {
  const at = (seq.items[i] as Node | null)?.range?.[0];
  if (at === undefined) return null;
  if (seq.flow) return at;
  let end = at; // the part of the line before the item (or before the comment that ends it)
  for (;;) {
    let lineStart = end;
    while (lineStart > 0 && text[lineStart - 1] !== "\n" && text[lineStart - 1] !== "\r") lineStart--;
    const before = text.slice(lineStart, end);
    const hash = before.search(/(?:^|[ \t])#/);
    const code = (hash < 0 ? before : before.slice(0, hash)).replace(/[ \t]+$/, "");
    if (code.endsWith("-") && (code.length === 1 || code[code.length - 2] === " " || code[code.length - 2] === "\t")) return lineStart + code.length - 1;
    if (code.trim() !== "" || lineStart === 0) return null;
    end = lineStart - 1; // the line break before this line (\r\n: its \n, then the \r is skipped)
    if (text[end] === "\n" && text[end - 1] === "\r") end--;
  }
}

/**
 * Edits that remove one entry of a collection: whole lines when the entry owns them, else the text
 * up to the next entry (or from the previous one). Null when it cannot be done cleanly.
 */
function removeEntry(src: SourceText, starts: readonly number[], ends: number[], i: number, flow: boolean): TextEdit[] | null {
  const s = starts[i];
  const e = ends[i];
  if (!flow && src.blankBefore(s)) {
    return [{ range: src.wholeLines(src.lineOf(s), src.lineOf(Math.max(s, e - 1))), newText: "" }];
  }
  if (i + 1 < starts.length) return [{ range: src.range(s, starts[i + 1]), newText: "" }];
  if (i > 0) return [{ range: src.range(ends[i - 1], e), newText: "" }];
  return null;
}

/** Where a collection sits in its parent mapping, so that removing its last entry removes the key too. */
export interface Parent { map: YAMLMap; pair: Pair }

/** Edits removing `pair` from `map` (with the parent's key when it was the only pair). */
export function removePair(src: SourceText, map: YAMLMap, pair: Pair, parent?: Parent): TextEdit[] | null {
  if (map.items.length === 1 && parent) return removePair(src, parent.map, parent.pair);
  const i = map.items.indexOf(pair);
  if (i < 0) return null;
  const pairs = map.items as Pair[];
  return removeEntry(src, pairs.map(pairStart), pairs.map((p) => contentEnd(p)), i, !!map.flow);
}

/** Edits removing the i-th item of `seq` (with the parent's key when it was the only item). */
export function removeItem(src: SourceText, seq: YAMLSeq, i: number, parent?: Parent): TextEdit[] | null {
  if (seq.items.length === 1 && parent) return removePair(src, parent.map, parent.pair);
  const starts = seq.items.map((_, k) => itemStart(src.text, seq, k));
  if (starts.some((s) => s === null)) return null;
  const ends = seq.items.map((n) => contentEnd(n as Node));
  return removeEntry(src, starts as number[], ends, i, !!seq.flow);
}

/**
 * Edits adding pairs to a mapping: `block` lines (relative indentation kept) after its last pair
 * at the column of its keys, or `flow` (`key: value`) before the `}` of a flow mapping.
 */
export function insertPairs(src: SourceText, map: YAMLMap, block: string[], flow: string): TextEdit[] | null {
  if (map.flow) {
    const close = (map.range?.[1] ?? 0) - 1;
    if (src.text[close] !== "}") return null;
    const at = src.position(close);
    return [{ range: { start: at, end: at }, newText: map.items.length ? `, ${flow}` : flow }];
  }
  const last = map.items[map.items.length - 1] as Pair | undefined;
  if (!last) return null;
  const col = src.position(pairStart(map.items[0] as Pair)).character;
  const indent = " ".repeat(col);
  const at = src.position(src.lineEnd(src.lineOf(Math.max(pairStart(last), contentEnd(last) - 1))));
  return [{ range: { start: at, end: at }, newText: block.map((l) => `${src.eol}${indent}${l}`).join("") }];
}

/** The edit replacing a scalar node's source (quotes included) by `newText`. */
export function replaceNode(src: SourceText, node: Node, newText: string): TextEdit[] {
  return [{ range: src.range(node.range?.[0] ?? 0, node.range?.[1] ?? 0), newText }];
}

/** The indentation step under `pair`: the column of its value's first key minus its own column (2 when unknown). */
export function indentStep(src: SourceText, pair: Pair): number {
  const v = pair.value;
  if (!isMap(v) || v.flow || !v.items.length) return 2;
  const step = src.position(pairStart(v.items[0] as Pair)).character - src.position(pairStart(pair)).character;
  return step > 0 ? step : 2;
}

export { isMap, isSeq, isScalar };
