/**
 * web-tree-sitter adapter: loads the tree-sitter runtime and the Python grammar (both wasm, shipped
 * beside the bundle in dist/, or resolved from node_modules when running from source) once per
 * process, and parses Python text into a concrete syntax tree.
 *
 * Positions: web-tree-sitter parses JavaScript strings as UTF-16, so `startPosition.column` and
 * `startIndex` count UTF-16 code units, which is what LSP positions use.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Language, Parser, type Node, type Tree } from "web-tree-sitter";
import { nestingProblem } from "../limits";

export type { Node as SyntaxNode, Tree as SyntaxTree } from "web-tree-sitter";

let ready: Promise<Language> | undefined;
let sharedParser: Parser | undefined;

/** Finds a wasm file beside the running bundle (dist/) or in node_modules. */
function locate(file: string, pkgPath: string): string {
  const beside = join(__dirname, file);
  if (existsSync(beside)) return beside;
  return require.resolve(pkgPath);
}

/**
 * Loads the runtime and the grammar. Idempotent; concurrent callers share one load.
 * @throws Error when a wasm file is missing (a broken install), with its path in the message.
 */
export function loadPython(): Promise<Language> {
  ready ??= (async () => {
    const runtime = locate("tree-sitter.wasm", "web-tree-sitter/tree-sitter.wasm");
    await Parser.init({ locateFile: () => runtime });
    const grammar = locate("tree-sitter-python.wasm", "tree-sitter-python/tree-sitter-python.wasm");
    return Language.load(grammar);
  })();
  return ready;
}

/** The Python grammar; only valid after {@link loadPython} resolved. */
export async function pythonLanguage(): Promise<Language> {
  return loadPython();
}

/**
 * Parses `text` (optionally reusing `previous`, an edited old tree, for an incremental parse).
 * One parser is reused for the process: parsing is synchronous, so there is no interleaving.
 * @param nestingChecked the caller found `nestingProblem(text)` null already (lintPython): not scanned again.
 * @throws Error if {@link loadPython} has not resolved yet.
 */
export function parsePython(text: string, previous?: Tree, nestingChecked = false): Tree {
  if (!sharedParser) throw new Error("parsePython called before loadPython() resolved");
  let input = pythonInput(text);
  // Nesting deep enough to overflow tree-sitter's wasm stack would kill the parser for the whole
  // process: parse the text blanked instead (same lines and lengths, no nodes). lintPython reports it.
  const tooDeep = !nestingChecked && nestingProblem(input) !== null;
  if (tooDeep) input = input.replace(/[^\n\r]/g, " ");
  const tree = sharedParser.parse(input, tooDeep ? null : (previous ?? null));
  if (!tree) throw new Error("tree-sitter returned no tree (parse cancelled)");
  return tree;
}

/**
 * The text as the parser reads it: a lone \r ends a line for Python (universal newlines) and for
 * LSP, but not for tree-sitter's Python grammar, so it is read as \n. Same length, so offsets stay
 * valid and rows match LSP lines.
 */
export function pythonInput(text: string): string {
  return text.includes("\r") ? text.replace(/\r(?!\n)/g, "\n") : text;
}

/**
 * The process's one parser (parsing is synchronous, so there is no interleaving): python/moduleTrees.ts parses chunks with it.
 * @throws Error if {@link initPythonParser} has not resolved yet.
 */
export function pythonParser(): Parser {
  if (!sharedParser) throw new Error("the Python parser is used before initPythonParser() resolved");
  return sharedParser;
}

/** Loads the grammar and prepares the shared parser; call once before {@link parsePython}. */
export async function initPythonParser(): Promise<void> {
  const language = await loadPython();
  if (!sharedParser) {
    sharedParser = new Parser();
    sharedParser.setLanguage(language);
  }
}

/** Number of ERROR and MISSING nodes in a tree: used to check that a fix adds no syntax error. */
export function syntaxErrorCount(tree: Tree): number {
  if (!tree.rootNode.hasError) return 0;
  let count = 0;
  const cursor = tree.walk();
  let descend = true;
  for (;;) {
    if (descend) {
      const n = cursor.currentNode;
      if (n.isError || n.isMissing) count++;
      if (n.hasError && cursor.gotoFirstChild()) continue;
    }
    if (cursor.gotoNextSibling()) {
      descend = true;
      continue;
    }
    if (!cursor.gotoParent()) break;
    descend = false;
  }
  return count;
}

/** The literal value of a plain (non-f, no interpolation) string node, or null. */
export function stringValue(node: Node | null | undefined): string | null {
  if (!node) return null;
  if (node.type === "concatenated_string") {
    let out = "";
    for (const c of node.namedChildren) {
      const v = stringValue(c);
      if (v === null) return null;
      out += v;
    }
    return out;
  }
  if (node.type !== "string") return null;
  const start = node.firstChild;
  if (start && /[fFbB]/.test(start.text.replace(/["']/g, ""))) {
    if (node.namedChildren.some((c) => c?.type === "interpolation")) return null;
  }
  let out = "";
  for (const c of node.namedChildren) {
    if (!c) continue;
    if (c.type === "string_content") out += unescapePython(c.text);
    else if (c.type === "interpolation") return null;
  }
  return out;
}

/**
 * The name of an environment variable given as a key (`os.environ["K"]`, `getenv("K")`,
 * `putenv("K", v)`, `update({"K": v})`): the value of one string literal (escapes decoded as
 * {@link stringValue} does), or null. An implicit concatenation (`"CUDA_" "VISIBLE_DEVICES"`) is
 * not taken as a name: then every name the model recognises appears in the source text as written,
 * which is what the text prefilter (prefilter.ts) relies on. No real program spells a variable name
 * that way.
 */
export function keyName(node: Node | null | undefined): string | null {
  return node?.type === "string" ? stringValue(node) : null;
}

function unescapePython(s: string): string {
  return s.replace(/\\(["'\\nt])/g, (_m, ch: string) => (ch === "n" ? "\n" : ch === "t" ? "\t" : ch));
}

/** The nearest enclosing function definition, or null at module level. */
export function enclosingFunction(node: Node): Node | null {
  for (let p = node.parent; p; p = p.parent) if (p.type === "function_definition") return p;
  return null;
}

/**
 * The names a function binds as parameters: a `parameters` or `lambda_parameters` node's plain
 * names, and the names of its default, typed, `*args` and `**kwargs` parameters. Empty for null.
 */
export function parameterNames(params: Node | null | undefined): Set<string> {
  const out = new Set<string>();
  for (const p of params?.namedChildren ?? []) {
    if (!p) continue;
    if (p.type === "identifier") out.add(p.text);
    else {
      const name = p.childForFieldName("name") ?? p.namedChildren.find((c) => c?.type === "identifier");
      if (name?.type === "identifier") out.add(name.text);
    }
  }
  return out;
}
