/**
 * Small tree-sitter helpers shared by the rules: call arguments, statements and their lines,
 * value flow through module assignments ("is this expression built from that read?"), and the
 * text edits the quick fixes need (insert a line above, remove a statement, wrap a block).
 */
import { stringValue, type SyntaxNode } from "../../python/parser";
import type { ModuleModel } from "../../python/model";
import type { EnvReadEvent } from "../../python/events";
import type { Position, TextEdit } from "../../types";
import { eolOf, lineEndAt, lineStartAt, nextLineStartAt } from "../../fixes";

/** The arguments of a call: positional ones (in order) and keyword ones (by name). */
export interface CallArgs {
  positional: SyntaxNode[];
  keywords: Map<string, SyntaxNode>;
}

/** Splits a call's argument list; `*args` / `**kwargs` entries count as positional. */
export function callArgs(call: SyntaxNode): CallArgs {
  const positional: SyntaxNode[] = [];
  const keywords = new Map<string, SyntaxNode>();
  for (const a of call.childForFieldName("arguments")?.namedChildren ?? []) {
    if (!a || a.type === "comment") continue;
    if (a.type === "keyword_argument") {
      const name = a.childForFieldName("name")?.text;
      const value = a.childForFieldName("value");
      if (name && value) keywords.set(name, value);
    } else positional.push(a);
  }
  return { positional, keywords };
}

/**
 * The callee path of a call with `()` markers removed (`torch.cuda.set_device`), or null. Kept per
 * call with the model (ModelDerived `calleePaths`): the rules ask it of the same calls again and
 * again (python3-torch: 23,128 asks of 7,899 calls).
 */
export function calleePath(model: ModuleModel, call: SyntaxNode): string | null {
  const kept = (model.derived.calleePaths ??= new Map());
  let path = kept.get(call.id);
  if (path === undefined) {
    path = model.resolve(call.childForFieldName("function"))?.replace(/\(\)/g, "") ?? null;
    kept.set(call.id, path);
  }
  return path;
}

/**
 * The statements of the block that holds `stmt`, comments included, in order. A top-level
 * statement's parent is the root of its chunk (python/moduleTrees.ts), which holds only that
 * chunk's statements: the module's are `model.tree.statements`. Null when `stmt` has no parent.
 */
export function blockStatements(model: ModuleModel, stmt: SyntaxNode): readonly SyntaxNode[] | null {
  const block = stmt.parent;
  if (!block) return null;
  if (block.type === "module") return model.tree.statements;
  return block.namedChildren.filter((c): c is SyntaxNode => !!c);
}

/** The statement (a child of a block or of the module) that contains `node`. */
export function statementOf(node: SyntaxNode): SyntaxNode {
  let n = node;
  while (n.parent && n.parent.type !== "block" && n.parent.type !== "module") n = n.parent;
  return n;
}

export { enclosingFunction } from "../../python/parser";

/** Whether `node` is the target of a plain assignment (`os.environ[K] = ...`, `x = ...`), not a read. */
export function isAssignmentTarget(node: SyntaxNode): boolean {
  return node.parent?.type === "assignment" && node.parent.childForFieldName("left")?.id === node.id;
}

/** Whether `inner` lies inside `outer` (or is it). */
export function contains(outer: SyntaxNode, inner: SyntaxNode): boolean {
  return inner.startIndex >= outer.startIndex && inner.endIndex <= outer.endIndex;
}

/** The alternative bodies of an `if` (consequence, each `elif`, `else`) or a `try` (its body, each `except`). */
export function branchesOf(stmt: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (const c of stmt.children)
    if (
      c &&
      (c.type === "block" || c.type === "elif_clause" || c.type === "else_clause" || c.type === "except_clause") &&
      !(stmt.type === "try_statement" && c.type === "else_clause")
    )
      out.push(c);
  return out;
}

/**
 * Whether `a` and `b` lie in different branches of one `if` statement (its body, an `elif`, the
 * `else`), so that one pass through the code never runs both: the lowest `if` holding both decides.
 */
export function inOtherBranch(a: SyntaxNode, b: SyntaxNode): boolean {
  for (let p = a.parent; p; p = p.parent) {
    if (p.type === "function_definition" || p.type === "lambda" || p.type === "module") return false;
    if (p.type !== "if_statement" || !contains(p, b)) continue;
    const branches = branchesOf(p);
    const x = branches.find((c) => contains(c, a)),
      y = branches.find((c) => contains(c, b));
    return !!x && !!y && x.id !== y.id;
  }
  return false;
}

/** Local names bound to a module path by the file's imports (`torch` → `["torch"]`, or `["th"]` after `import torch as th`). */
export function namesFor(model: ModuleModel, path: string): string[] {
  const out: string[] = [];
  for (const [local, p] of model.symbols) if (p === path && !local.startsWith("\u0000")) out.push(local);
  return out;
}

/**
 * Whether the module tests a key's presence: a comparison `"K" in x` or `"K" not in x` (anywhere in
 * the file) whose left operand is a string literal passing `key`. `words`: what every such `K`
 * contains, so that only the statements naming one are searched (ModuleModel.nodesMentioning).
 */
export function testsMembership(model: ModuleModel, words: readonly string[], key: (k: string) => boolean): boolean {
  return model.nodesMentioning("comparison_operator", words).some((c) => {
    const first = stringValue(c.namedChildren[0] ?? null);
    return first !== null && key(first) && c.children.some((k) => k && (k.type === "in" || k.type === "not in"));
  });
}

/** An integer literal's value (decimal digits only), or null. */
export function intLiteral(node: SyntaxNode | null | undefined): number | null {
  if (!node || node.type !== "integer") return null;
  return /^\d+$/.test(node.text) ? Number(node.text) : null;
}

/** The reads of one environment variable (`os.environ["K"]`, `.get("K")`, `os.getenv("K")`), anywhere in the file. */
export function envReadsOf(model: ModuleModel, variable: string): EnvReadEvent[] {
  return model.events.filter((e): e is EnvReadEvent => e.kind === "envRead" && e.variable === variable);
}

/** Whether an identifier node is a name being read (not an attribute name, keyword name or parameter). */
function isNameUse(n: SyntaxNode): boolean {
  const p = n.parent;
  if (!p) return true;
  if (p.type === "attribute" && p.childForFieldName("attribute")?.id === n.id) return false;
  if (p.type === "keyword_argument" && p.childForFieldName("name")?.id === n.id) return false;
  return true;
}

/** The iterable of the `for` loop (statement or comprehension) that binds `name` around `use`, or null. */
function loopIterableOf(name: string, use: SyntaxNode): SyntaxNode | null {
  for (let p = use.parent; p; p = p.parent) {
    if (p.type === "for_statement" || p.type === "for_in_clause") {
      const left = p.childForFieldName("left");
      if (left?.type === "identifier" && left.text === name) return p.childForFieldName("right");
    }
    if (
      p.type === "list_comprehension" ||
      p.type === "generator_expression" ||
      p.type === "set_comprehension" ||
      p.type === "dictionary_comprehension"
    ) {
      for (const c of p.namedChildren) {
        if (c?.type !== "for_in_clause") continue;
        const left = c.childForFieldName("left");
        if (left?.type === "identifier" && left.text === name) return c.childForFieldName("right");
      }
    }
  }
  return null;
}

/**
 * Whether the value of `node` is built from one of the `sources` nodes (matched by id): the
 * source itself, an expression containing it, or a name assigned from such an expression
 * earlier in the file (followed a few assignments deep; `for` loop targets follow their iterable).
 * `len(...)`, comparisons and the condition of `a if cond else b` stop the flow (a count or a test is
 * not the value); so does any node in `stop`.
 * @returns the source node reached, or null.
 */
export function flowsFrom(
  model: ModuleModel,
  node: SyntaxNode | null | undefined,
  sources: ReadonlySet<number>,
  depth = 0,
  stop?: ReadonlySet<number>,
): SyntaxNode | null {
  // Depth-first over a worklist (no recursion: expressions may nest thousands deep), with a budget.
  const work: Array<[SyntaxNode, number]> = node ? [[node, depth]] : [];
  for (let budget = 20_000; work.length && budget > 0; budget--) {
    const [n, hops] = work.pop()!;
    if (hops > 6) continue;
    if (sources.has(n.id)) return n;
    if (stop?.has(n.id)) continue;
    if (n.type === "call") {
      const fn = n.childForFieldName("function");
      if (fn?.type === "identifier" && fn.text === "len") continue;
    }
    if (n.type === "identifier") {
      if (!isNameUse(n)) continue;
      const next = model.valueOf(n.text, n.startIndex) ?? loopIterableOf(n.text, n);
      if (next) work.push([next, hops + 1]);
      continue;
    }
    if (
      n.type === "lambda" ||
      n.type === "function_definition" ||
      n.type === "comparison_operator" ||
      n.type === "not_operator"
    )
      continue;
    // `a if cond else b`: the condition decides, it is not the value.
    const kids = n.type === "conditional_expression" ? [n.namedChildren[0], n.namedChildren[2]] : n.namedChildren;
    for (let i = kids.length - 1; i >= 0; i--) {
      const c = kids[i];
      if (c) work.push([c, hops]);
    }
  }
  return null;
}

/** The indentation (spaces/tabs) that the line of `node` starts with. */
export function indentOf(model: ModuleModel, node: SyntaxNode): string {
  const line = model.text.slice(lineStartAt(model.text, node.startIndex), node.startIndex);
  return /^[ \t]*/.exec(line)![0];
}

/** Whether a statement is the first thing on its line (only indentation before it). */
export function startsItsLine(model: ModuleModel, stmt: SyntaxNode): boolean {
  return model.text.slice(lineStartAt(model.text, stmt.startIndex), stmt.startIndex).trim() === "";
}

/** Whether a statement has its lines to itself: nothing but indentation before it, nothing but a comment after it. */
export function ownsItsLines(model: ModuleModel, stmt: SyntaxNode): boolean {
  if (!startsItsLine(model, stmt)) return false;
  const next = stmt.nextSibling;
  if (next && next.startPosition.row === stmt.endPosition.row && next.type !== "comment") return false;
  const after = model.text.slice(stmt.endIndex, lineEndAt(model.text, stmt.endIndex)).trim();
  return after === "" || after.startsWith("#");
}

/**
 * Whether the line `stmt` starts on continues the line above through a `\` (its indentation is then
 * not the statement's: a line inserted above it would join the continued line).
 */
export function continuesLineAbove(model: ModuleModel, stmt: SyntaxNode): boolean {
  const lineStart = lineStartAt(model.text, stmt.startIndex);
  if (lineStart === 0) return false;
  let k = lineStart - 1; // the line break that ends the line above: \n, \r or \r\n
  if (model.text[k] === "\n" && model.text[k - 1] === "\r") k--;
  k--;
  if (k < 0 || model.text[k] !== "\\") return false;
  return model.tree.descendantForIndex(k)?.type === "line_continuation";
}

/**
 * Inserts `code` (one logical line, no line break) so that it runs just before `stmt`: on its own
 * line above it with the same indentation, or as `code; ` in front of it when the statement does
 * not start its line (`if x: stmt`) or its line continues the one above (`y = 0; \`).
 */
export function insertAbove(model: ModuleModel, stmt: SyntaxNode, code: string): TextEdit {
  if (startsItsLine(model, stmt) && !continuesLineAbove(model, stmt)) {
    const at: Position = { line: stmt.startPosition.row, character: 0 };
    return { range: { start: at, end: at }, newText: `${indentOf(model, stmt)}${code}${eolOf(model.text)}` };
  }
  const at: Position = { line: stmt.startPosition.row, character: stmt.startPosition.column };
  return { range: { start: at, end: at }, newText: `${code}; ` };
}

/**
 * Removes a statement with its whole lines; a block left empty gets `pass`. Null when the
 * statement shares a line with another one (the caller then offers no fix).
 */
export function removeStatement(model: ModuleModel, stmt: SyntaxNode): TextEdit | null {
  if (!ownsItsLines(model, stmt)) return null;
  const first = stmt.startPosition.row;
  const last = stmt.endPosition.row;
  const parent = stmt.parent;
  const alone = parent?.type === "block" && parent.namedChildren.filter((c) => c && c.type !== "comment").length === 1;
  const hasNext = nextLineStartAt(model.text, stmt.endIndex) !== null;
  const end: Position = hasNext
    ? { line: last + 1, character: 0 }
    : { line: last, character: model.text.length - lineStartAt(model.text, stmt.endIndex) };
  const eol = hasNext ? eolOf(model.text) : "";
  return {
    range: { start: { line: first, character: 0 }, end },
    newText: alone ? `${indentOf(model, stmt)}pass${eol}` : "",
  };
}

/**
 * Replaces `stmt` by `header` (e.g. `with torch.cuda.device(1):`) and indents the statements that
 * follow it in the same block under it. Null when there is nothing after it, when a statement of
 * the block shares its line, or when a multi-line string would change by being indented.
 */
export function wrapRestOfBlock(model: ModuleModel, stmt: SyntaxNode, header: string): TextEdit | null {
  const type = stmt.parent?.type;
  const block = type === "block" || type === "module" ? blockStatements(model, stmt) : null;
  if (!block) return null;
  const rest: SyntaxNode[] = [];
  let seen = false;
  for (const c of block) {
    if (c.id === stmt.id) {
      seen = true;
      continue;
    }
    if (seen) rest.push(c);
  }
  const statements = rest.filter((c) => c.type !== "comment");
  if (!statements.length || !ownsItsLines(model, stmt)) return null;
  for (const s of statements) if (!startsItsLine(model, s)) return null;
  const last = rest[rest.length - 1];
  for (const s of [stmt, ...rest]) {
    for (const str of s.descendantsOfType("string"))
      if (str && str.startPosition.row !== str.endPosition.row) return null;
  }
  const indent = indentOf(model, stmt);
  const unit = indent.includes("\t") ? "\t" : "    ";
  const eol = eolOf(model.text);
  const firstRow = stmt.startPosition.row;
  const endRow = last.endPosition.row;
  const endOffset = lineEndAt(model.text, last.endIndex);
  const body = model.text.slice(nextLineStartAt(model.text, stmt.endIndex) ?? model.text.length, endOffset);
  const indented = body
    .split(/(\r\n|\n|\r)/)
    .map((part, i) => (i % 2 === 1 || part.trim() === "" ? part : unit + part))
    .join("");
  const trailing = model.text.slice(stmt.endIndex, lineEndAt(model.text, stmt.endIndex)).trim();
  return {
    range: {
      start: { line: firstRow, character: 0 },
      end: { line: endRow, character: endOffset - lineStartAt(model.text, last.endIndex) },
    },
    newText: `${indent}${header}${trailing ? `  ${trailing}` : ""}${eol}${indented}`,
  };
}

/**
 * Visits `root` and its named descendants depth-first, in source order, without recursion (a
 * pathological file can nest expressions thousands deep); `enter` returns false to skip a subtree.
 */
export function walk(root: SyntaxNode, enter: (n: SyntaxNode) => boolean | void): void {
  const stack: SyntaxNode[] = [root];
  while (stack.length) {
    const n = stack.pop()!;
    if (enter(n) === false) continue;
    const kids = n.namedChildren;
    for (let i = kids.length - 1; i >= 0; i--) {
      const c = kids[i];
      if (c) stack.push(c);
    }
  }
}

/** Names (identifiers) that an expression or statement reads, ignoring attribute names and keyword names. */
export function namesRead(node: SyntaxNode): Set<string> {
  const out = new Set<string>();
  walk(node, (n) => {
    if (n.type !== "identifier") return true;
    if (isNameUse(n)) out.add(n.text);
    return false;
  });
  return out;
}

/** Names a statement binds: assignment targets, `for` targets, imports, `with ... as`, definitions. */
export function namesBound(stmt: SyntaxNode): Set<string> {
  const out = new Set<string>();
  const targets = (t: SyntaxNode | null) => {
    if (t)
      walk(t, (n) => {
        if (n.type === "identifier") out.add(n.text);
        return [
          "pattern_list",
          "tuple_pattern",
          "list_pattern",
          "expression_list",
          "tuple",
          "list",
          "list_splat_pattern",
          "as_pattern_target",
        ].includes(n.type);
      });
  };
  walk(stmt, (n) => {
    switch (n.type) {
      case "assignment":
      case "augmented_assignment":
        targets(n.childForFieldName("left"));
        return true;
      case "for_statement":
        targets(n.childForFieldName("left"));
        return true;
      case "as_pattern":
        targets(n.childForFieldName("alias"));
        return true;
      case "function_definition":
      case "class_definition": {
        const name = n.childForFieldName("name")?.text;
        if (name) out.add(name);
        return false;
      }
      case "import_statement":
      case "import_from_statement":
        for (const c of n.namedChildren) {
          if (c?.type === "dotted_name" && c.id !== n.childForFieldName("module_name")?.id)
            out.add(c.text.split(".")[0]);
          if (c?.type === "aliased_import") {
            const a = c.childForFieldName("alias")?.text;
            if (a) out.add(a);
          }
        }
        return false;
      default:
        return true;
    }
  });
  return out;
}

/** Whether `node` reads one of `names`: it is, or holds, an identifier of that name. */
export function readsAnyName(node: SyntaxNode | null | undefined, names: ReadonlySet<string>): boolean {
  if (!node) return false;
  if (node.type === "identifier") return names.has(node.text);
  return node.namedChildren.some((c) => readsAnyName(c, names));
}
