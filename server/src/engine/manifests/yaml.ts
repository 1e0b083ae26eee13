/**
 * YAML through the `yaml` package (parseAllDocuments, no source tokens): lookups on mappings and
 * the text edits that manifest fixes need (remove a pair or a sequence item with its lines, add a
 * pair to a block or flow mapping, replace a scalar), computed from node ranges so the rest of the
 * file keeps its formatting and comments.
 */
import {
  parseAllDocuments,
  visit,
  Lexer,
  CST,
  isMap,
  isSeq,
  isScalar,
  isPair,
  isCollection,
  type Document,
  type Node,
  type Pair,
  type YAMLMap,
  type YAMLSeq,
} from "yaml";
import { textChange } from "../python/keptText";
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

/** The options of every parse here (a part of a stream must be parsed as the whole is). */
const PARSE_OPTIONS = { prettyErrors: false, uniqueKeys: false } as const;

/** Parses every document of a YAML stream; never throws. */
export function parseYaml(text: string): YamlDocument[] {
  try {
    return parseAllDocuments(text, PARSE_OPTIONS).map((doc, index) => ({
      index,
      doc: doc as Document.Parsed,
      broken: doc.errors.length > 0,
    }));
  } catch {
    return [];
  }
}

/** A YAML stream's documents with the text they were parsed from (kept by the editor between versions). */
export interface YamlParse {
  text: string;
  documents: YamlDocument[];
}

/**
 * {@link parseYaml} of `text`, the next version of `previous.text`, parsing again only the
 * documents the change touches and one on each side of them (each from its `---`; the ranges of a
 * stream's documents tile it): those before are kept as they are, those after with their offsets
 * moved. The result equals a parse of the whole text (test/unit/server/engine/manifests/yamlIncremental.test.ts; a fuzz of
 * 26,000 random edits of streams of the ecosystem's YAML files, none different). The whole text is
 * parsed where that is not plain: a `%` directive line, ranges that do not tile, a change outside
 * the documents, an opened quote or bracket running on past the part read, an error at its end, an
 * error filed outside its document's range (the parser files a stray `}` under the document before).
 * A 3,780-line Kubernetes stream of 300 documents: ~47 ms a keystroke parsed whole, ~4 ms this way (in process).
 * Never throws. The previous parse's documents are reused: do not use `previous` after.
 */
export function parseYamlAfter(previous: YamlParse | undefined, text: string): YamlParse {
  const whole = (): YamlParse => ({ text, documents: parseYaml(text) });
  if (!previous || previous.documents.length < 2 || /(?:^|\n|\r)%/.test(text) || /(?:^|\n|\r)%/.test(previous.text))
    return whole();
  const old = previous.documents;
  if (old.some((d, k) => !d.doc.range || (k > 0 && old[k - 1].doc.range[2] !== d.doc.range[0]))) return whole();
  const change = textChange(previous.text, text);
  const delta = change.newEnd - change.oldEnd;
  // The documents whose range meets the change (a change at a boundary meets both sides).
  let i = old.findIndex((d) => d.doc.range[2] >= change.start);
  let j = -1;
  for (let k = old.length - 1; k >= 0; k--)
    if (old[k].doc.range[0] <= change.oldEnd) {
      j = k;
      break;
    }
  if (
    i < 0 ||
    j < 0 ||
    change.start < old[0].doc.range[0] ||
    (old[old.length - 1].doc.range[2] < previous.text.length && change.oldEnd > old[old.length - 1].doc.range[2])
  )
    return whole();
  if (i > j) i = j;
  // The document before the change is parsed again with it: a change next to a `---` may join the
  // two, and the parser files some errors of a document's text (a stray `}` opening a line) under
  // the document before it.
  if (i > 0) i--;
  if (j < old.length - 1) j++; // and the one after it, for the same reason
  const from = i === 0 ? 0 : old[i].doc.range[0];
  const to = (j === old.length - 1 ? previous.text.length : old[j].doc.range[2]) + delta;
  if (from > change.start || to < change.newEnd) return whole();
  // The part read alone must be lexed as the whole text lexes it, and the lexer must meet a `---`
  // at `to`: an opened quote runs on over later `---` lines, and the lexer looks ahead for the
  // closing quote (so even the part's own tokens can change with text past `to`).
  if (to < text.length && !lexedAlike(text, from, to)) return whole();
  let middle: Document.Parsed[];
  try {
    middle = parseAllDocuments(text.slice(from, to), PARSE_OPTIONS) as Document.Parsed[];
  } catch {
    return whole();
  }
  if (!Array.isArray(middle) || middle.length === 0) return whole();
  // An error at the end of the part read is where the whole text goes on (`---` instead of its
  // end: an unclosed quote's error sits one character apart), so such a part is not taken.
  const end = to - from;
  if (to < text.length && middle.some((d) => [...d.errors, ...d.warnings].some((e) => e.pos[1] >= end))) return whole();
  for (const d of middle) shiftDocument(d, from);
  const after = old.slice(j + 1);
  // An error filed outside its document's range (see above) ties documents together: parse whole.
  const strays = (d: Document.Parsed) =>
    [...d.errors, ...d.warnings].some((e) => e.pos[0] < d.range[0] || e.pos[1] > d.range[2] + 1);
  if (middle.some(strays) || old.some((d) => strays(d.doc))) return whole();
  for (const d of after) shiftDocument(d.doc, delta);
  const docs = [...old.slice(0, i).map((d) => d.doc), ...middle, ...after.map((d) => d.doc)];
  return { text, documents: docs.map((doc, index) => ({ index, doc, broken: doc.errors.length > 0 })) };
}

/**
 * Whether YAML's lexer gives the same tokens for `text[from, to)` read alone as for the same part
 * of `text` read from `from` (a document's start) on, and meets a document-start marker (`---`) at
 * exactly `to` there. Reads the rest of the text only up to `to`.
 */
function lexedAlike(text: string, from: number, to: number): boolean {
  try {
    const alone = [...new Lexer().lex(text.slice(from, to))];
    let offset = from,
      k = 0;
    for (const tok of new Lexer().lex(text.slice(from))) {
      const width = tok === CST.DOCUMENT || tok === CST.SCALAR || tok === CST.FLOW_END ? 0 : tok.length; // control tokens hold no text
      if (offset >= to && width > 0) return offset === to && k === alone.length && CST.tokenType(tok) === "doc-start";
      if (offset >= to) continue;
      if (alone[k++] !== tok) return false;
      offset += width;
    }
  } catch {
    return false;
  }
  return false;
}

/** Moves every offset of a parsed document by `delta` (its range, its nodes' ranges, its errors' and warnings' positions). */
function shiftDocument(doc: Document.Parsed, delta: number): void {
  if (delta === 0) return;
  const moved = (r: readonly number[]) => r.map((x) => x + delta) as [number, number, number];
  if (doc.range) doc.range = moved(doc.range);
  visit(doc, {
    Node(_, n) {
      if (n.range) n.range = moved(n.range);
    },
  });
  for (const e of [...doc.errors, ...doc.warnings]) e.pos = moved(e.pos) as unknown as [number, number];
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
  if (isCollection(node) && !node.flow && node.items.length)
    return contentEnd(node.items[node.items.length - 1] as Node | Pair);
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
    if (code.endsWith("-") && (code.length === 1 || code[code.length - 2] === " " || code[code.length - 2] === "\t"))
      return lineStart + code.length - 1;
    if (code.trim() !== "" || lineStart === 0) return null;
    end = lineStart - 1; // the line break before this line (\r\n: its \n, then the \r is skipped)
    if (text[end] === "\n" && text[end - 1] === "\r") end--;
  }
}

/**
 * Edits that remove one entry of a collection: whole lines when the entry owns them, else the text
 * up to the next entry (or from the previous one). Null when it cannot be done cleanly.
 */
function removeEntry(
  src: SourceText,
  starts: readonly number[],
  ends: number[],
  i: number,
  flow: boolean,
): TextEdit[] | null {
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
export interface Parent {
  map: YAMLMap;
  pair: Pair;
}

/** Edits removing `pair` from `map` (with the parent's key when it was the only pair). */
export function removePair(src: SourceText, map: YAMLMap, pair: Pair, parent?: Parent): TextEdit[] | null {
  if (map.items.length === 1 && parent) return removePair(src, parent.map, parent.pair);
  const i = map.items.indexOf(pair);
  if (i < 0) return null;
  const pairs = map.items as Pair[];
  return removeEntry(
    src,
    pairs.map(pairStart),
    pairs.map((p) => contentEnd(p)),
    i,
    !!map.flow,
  );
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
