/**
 * GPU057 (preview): CUDA_VISIBLE_DEVICES written, in a function a process pool runs, from a
 * parameter that the submitting code fills with a pool index it counts (0, 1, ...): the worker
 * inherits the parent's CUDA_VISIBLE_DEVICES, and the write replaces it with the index.
 *
 * The shapes read, all in one file: `ProcessPoolExecutor(...).submit(fn, a, b)` (a name assigned the
 * executor, or a `with ... as` name) and `multiprocessing.Pool(...).apply_async(fn, (a, b))`; `fn` a
 * module-level function by name, or a method of the file's class as `self.name`/`cls.name`/`C.name`;
 * the argument a counter (every assignment to its text is `= 0`, `= x + 1`, `= (x + 1) % n` or
 * `+= 1`, one of them `= 0`) or the loop variable of an enclosing `for i in range(...)` /
 * `for i, _ in enumerate(...)`.
 */
import type { RuleContext } from "../../rule";
import { enclosingFunction, type SyntaxNode } from "../../python/parser";
import { positionalParams } from "../../python/devices";
import { callArgs, walk } from "./py";

const EXECUTORS: ReadonlySet<string> = new Set([
  "concurrent.futures.ProcessPoolExecutor",
  "concurrent.futures.process.ProcessPoolExecutor",
]);
const POOLS = /^multiprocessing(?:\.pool)?\.(?:get_context\(\)\.)?Pool$/;

/** One submission of the writing function with a counted index where the write's parameter is. */
export interface PoolIndexSubmit {
  call: SyntaxNode;
  arg: SyntaxNode;
}

/** The parameter a CUDA_VISIBLE_DEVICES value is made of alone: `p`, `str(p)`, `f"{p}"`; null otherwise. */
export function writtenParam(value: SyntaxNode, fn: SyntaxNode): string | null {
  let v: SyntaxNode | null = value;
  if (v.type === "call" && v.childForFieldName("function")?.text === "str") {
    const { positional, keywords } = callArgs(v);
    v = positional.length === 1 && !keywords.size ? positional[0] : null;
  } else if (v.type === "string") {
    const parts = v.namedChildren.filter((c) => c?.type === "interpolation");
    const text = v.namedChildren.filter((c) => c?.type === "string_content");
    v = parts.length === 1 && !text.length ? (parts[0]!.namedChildren[0] ?? null) : null;
  }
  if (v?.type !== "identifier" || !positionalParams(fn).includes(v.text)) return null;
  // Rebound in the function: the value may be anything.
  let rebound = false;
  walk(fn.childForFieldName("body")!, (n) => {
    const left = n.type === "assignment" || n.type === "augmented_assignment" ? n.childForFieldName("left") : null;
    if (left?.text === v!.text) rebound = true;
    return !rebound;
  });
  return rebound ? null : v.text;
}

/** The submissions in the file of `fn` whose argument for `param` is a counted pool index. */
export function poolIndexSubmits(ctx: RuleContext, fn: SyntaxNode, param: string): PoolIndexSubmit[] {
  const name = fn.childForFieldName("name")?.text;
  if (!name) return [];
  const decorated = fn.parent?.type === "decorated_definition" ? fn.parent : null;
  const isStatic = !!decorated?.namedChildren.some((d) => d?.type === "decorator" && d.text === "@staticmethod");
  const cls = (decorated ?? fn).parent?.parent?.type === "class_definition" ? (decorated ?? fn).parent!.parent! : null;
  const className = cls?.childForFieldName("name")?.text;
  const params = positionalParams(fn);
  const out: PoolIndexSubmit[] = [];
  for (const call of ctx.model.nodesMentioning("call", [name])) {
    const f = call.childForFieldName("function");
    const method = f?.type === "attribute" ? f.childForFieldName("attribute")?.text : undefined;
    if (method !== "submit" && method !== "apply_async") continue;
    if (!isPool(ctx, f!.childForFieldName("object")!, method)) continue;
    const { positional, keywords } = callArgs(call);
    const target = positional[0];
    // A method through the instance is bound: its first parameter is the instance.
    let offset: number;
    if (!cls && target?.type === "identifier" && target.text === name) offset = 0;
    else if (cls && target?.type === "attribute" && target.childForFieldName("attribute")?.text === name) {
      const obj = target.childForFieldName("object")?.text;
      if (obj !== "self" && obj !== "cls" && obj !== className) continue;
      offset = isStatic || obj === className ? 0 : 1;
    } else continue;
    let args: SyntaxNode[];
    if (method === "submit") args = positional.slice(1);
    else {
      const tuple = keywords.get("args") ?? positional[1];
      if (tuple?.type !== "tuple") continue;
      args = tuple.namedChildren.filter((c): c is SyntaxNode => !!c && c.type !== "comment");
    }
    const k = params.indexOf(param) - offset;
    if (k < 0 || k >= args.length || args.slice(0, k + 1).some((a) => a.type === "list_splat")) continue;
    if (isCountedIndex(ctx, args[k], call)) out.push({ call, arg: args[k] });
  }
  return out;
}

/** Whether `obj` (the receiver of `.submit`/`.apply_async`) is a process pool made in this file. */
function isPool(ctx: RuleContext, obj: SyntaxNode, method: string): boolean {
  const made = (v: SyntaxNode | null | undefined): boolean => {
    if (v?.type !== "call") return false;
    const path = ctx.model.resolve(v.childForFieldName("function")) ?? "";
    return method === "submit" ? EXECUTORS.has(path) : POOLS.test(path);
  };
  for (const a of ctx.model.nodesMentioning("assignment", [obj.text.replace(/^.*\./, "")])) {
    if (a.childForFieldName("left")?.text === obj.text && made(a.childForFieldName("right"))) return true;
  }
  for (const w of ctx.model.nodesMentioning("as_pattern", [obj.text])) {
    const alias = w.childForFieldName("alias")?.text;
    if (alias === obj.text && made(w.namedChildren[0])) return true;
  }
  return false;
}

/** A counter (`x = 0`, then only `x = x + 1`, `x = (x + 1) % n`, `x += 1`) or a `range`/`enumerate` loop variable around `at`. */
function isCountedIndex(ctx: RuleContext, arg: SyntaxNode, at: SyntaxNode): boolean {
  if (arg.type !== "identifier" && !(arg.type === "attribute" && arg.childForFieldName("object")?.text === "self"))
    return false;
  const t = arg.text;
  if (arg.type === "identifier")
    for (let p = at.parent; p && p.type !== "function_definition"; p = p.parent) {
      if (p.type !== "for_statement") continue;
      const left = p.childForFieldName("left");
      const right = p.childForFieldName("right");
      const callee = right?.type === "call" ? right.childForFieldName("function")?.text : undefined;
      const { positional, keywords } =
        right?.type === "call" ? callArgs(right) : { positional: [], keywords: new Map() };
      if (callee === "range" && left?.text === t && positional.length === 1 && !keywords.size) return true;
      if (callee === "enumerate" && positional.length === 1 && !keywords.size) {
        const first = left?.type === "pattern_list" || left?.type === "tuple_pattern" ? left.namedChildren[0] : null;
        if (first?.text === t) return true;
      }
    }
  let starts = false;
  let ok = true;
  let seen = 0;
  const name = t.replace(/^self\./, "");
  for (const a of ctx.model.nodesMentioning(["assignment", "augmented_assignment"], [name])) {
    if (a.childForFieldName("left")?.text !== t) continue;
    seen++;
    const right = a.childForFieldName("right");
    const op = a.type === "augmented_assignment" ? a.childForFieldName("operator")?.text : "=";
    if (op === "=" && right?.text === "0") starts = true;
    else if (!((op === "+=" && right?.text === "1") || (op === "=" && isStep(right, t)))) ok = false;
  }
  // The counter is the file's own: a method of another file could change it too, but not to a GPU id.
  return ok && starts && seen >= 2 && enclosingFunction(at) !== null;
}

/** `x + 1`, or `(x + 1) % n` with any n (`len(self.stubs)`): still 0, 1, ... below n; `x` is the counter's text. */
function isStep(n: SyntaxNode | null | undefined, x: string): boolean {
  const plusOne = (e: SyntaxNode | null | undefined): boolean =>
    e?.type === "binary_operator" &&
    e.childForFieldName("operator")?.text === "+" &&
    e.childForFieldName("left")?.text === x &&
    e.childForFieldName("right")?.text === "1";
  if (plusOne(n)) return true;
  if (n?.type !== "binary_operator" || n.childForFieldName("operator")?.text !== "%") return false;
  const left = n.childForFieldName("left");
  return left?.type === "parenthesized_expression" && plusOne(left.namedChildren[0]);
}
