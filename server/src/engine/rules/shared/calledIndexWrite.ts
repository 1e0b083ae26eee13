/**
 * GPU005 across functions and modules: a call of a function (of this file, or a project function of
 * another module) that writes to CUDA_VISIBLE_DEVICES the index of the device string it is given
 * (python/visibleIndex.ts `indexWriters`), and the later uses of that same string in the caller:
 * after the write that GPU is the process's cuda:0, so `cuda:1` no longer exists.
 */
import type { SyntaxNode } from "../../python/parser";
import type { RuleContext } from "../../rule";
import type { RelatedInfo } from "../../types";
import { nodeRange } from "../../python/events";
import { freezesVariable } from "../../python/timeline";
import { indexWriters, type IndexWrite } from "../../python/visibleIndex";
import { callArgs, calleePath, contains, enclosingFunction, inOtherBranch, statementOf } from "./py";

/** A call that writes a device string's index, as GPU005 reports the string's later uses. */
export interface CalledWrite {
  /** The statement holding the call. */
  statement: SyntaxNode;
  /** The device string's text in the caller (`cfg.device`). */
  device: string;
  /** The callee's name, and where its write is (`utils.py:16`). */
  callee: string;
  where: string;
  related: RelatedInfo[];
  /** The use is in another method of the class whose constructor makes the call. */
  otherMethod: boolean;
}

const VARIABLE = "CUDA_VISIBLE_DEVICES";

/**
 * Calls `mark` with each later use (a node whose text is the device string) of a device string whose
 * index a called function wrote to CUDA_VISIBLE_DEVICES: in the caller's function (or module level)
 * after the call, until the string or the name holding it is assigned, or that name is used
 * otherwise than reading an attribute (a call may renumber it); and, for a call in a constructor
 * given its parameter that the constructor keeps (`self._cfg = cfg`), in the class's other methods
 * (`torch.device(self._cfg.device)`), which run after it. Silent where CUDA was initialised before
 * the call in the same function (or anywhere at module level, for the class's methods).
 */
export function calledIndexWrites(ctx: RuleContext, mark: (use: SyntaxNode, w: CalledWrite) => void): void {
  if (!ctx.model.frameworks.has("torch")) return;
  const project = ctx.project;
  // Only calls that can reach a writer are read, found through the statements that name one
  // (model.nodesMentioning): the file's own writers, and the names its imports bind to the project's
  // modules (every path to a project function starts with one). Walking every call of a long file
  // that writes the variable cost each keystroke ~35 ms (engine-latency, the 5,000-line file).
  const local = ctx.model.text.includes(VARIABLE) ? indexWriters(ctx.model) : new Map<string, IndexWrite>();
  const imported = project?.callableIndexWrite
    ? [...ctx.model.symbols].filter(([, path]) => project.isProjectModule?.(path) !== false).map(([name]) => name)
    : [];
  const words = [...local.keys(), ...imported];
  if (!words.length) return;
  const projectCallee = new Map<string, boolean>();
  const fromProject = (path: string): boolean => {
    let yes = projectCallee.get(path);
    if (yes === undefined)
      projectCallee.set(
        path,
        (yes =
          project?.isProjectFunction?.(path) === true && project.callableModuleMentions?.(path, VARIABLE) === true),
      );
    return yes;
  };
  for (const call of ctx.model.nodesMentioning("call", words, true)) {
    const fn = call?.childForFieldName("function");
    if (!call || (fn?.type !== "identifier" && fn?.type !== "attribute")) continue;
    const isLocal = fn.type === "identifier" && ctx.model.functions.has(fn.text) && local.has(fn.text);
    let path: string | null = null;
    if (!isLocal) {
      if (!project?.callableIndexWrite) continue;
      path = calleePath(ctx.model, call);
      if (!path?.includes(".") || !fromProject(path)) continue;
    }
    const { positional, keywords } = callArgs(call);
    if (![...positional, ...keywords.values()].some((a) => a.type === "identifier" || a.type === "attribute")) continue;
    let w: (IndexWrite & { where: string; file?: string }) | null = null;
    if (isLocal) {
      const found = local.get(fn.text);
      w = found ? { ...found, where: ctx.where(found.line - 1) } : null;
    } else w = project!.callableIndexWrite!(path!);
    const arg = w ? (positional[w.index] ?? keywords.get(w.name)) : undefined;
    if (!w || !arg || (arg.type !== "identifier" && arg.type !== "attribute")) continue;
    const statement = statementOf(call);
    if (initBefore(ctx, statement, !!enclosingFunction(statement))) continue;
    const device = w.attr ? `${arg.text}.${w.attr}` : arg.text;
    const root = arg.type === "attribute" ? rootName(arg) : arg.text;
    const callee = fn.text;
    const related: RelatedInfo[] = [
      {
        range: nodeRange(call),
        message: `${callee}(...) writes the index of ${device} to ${VARIABLE} (${w.where}): inside the process that GPU is cuda:0`,
      },
    ];
    if (w.file)
      related.push({
        range: w.range,
        message: `${VARIABLE} set to the index of ${w.attr ? `${w.name}.${w.attr}` : w.name} here`,
        file: w.file,
      });
    const found: CalledWrite = { statement, device, callee, where: w.where, related, otherMethod: false };
    const scope = enclosingFunction(statement);
    for (const use of usesAfter(ctx, scope, statement, device, root))
      if (enclosingFunction(use)?.id === scope?.id && !inOtherBranch(statement, use)) mark(use, found);
    if (w.attr && scope)
      methodUses(ctx, { scope, statement, arg, attr: w.attr }, (use) => mark(use, { ...found, otherMethod: true }));
  }
}

/** `a` of `a.b.c`. */
function rootName(n: SyntaxNode): string {
  while (n.type === "attribute") n = n.childForFieldName("object")!;
  return n.text;
}

/**
 * The nodes in `scope` (null: module level) after `statement` whose text is `device`, before the
 * first assignment to it or to `root`, the first method called on them, and the first other use of
 * `root` itself (given to a call, it may change).
 */
function usesAfter(
  ctx: RuleContext,
  scope: SyntaxNode | null,
  statement: SyntaxNode,
  device: string,
  root: string,
): SyntaxNode[] {
  const inScope = (n: SyntaxNode) => (scope ? contains(scope, n) : !enclosingFunction(n));
  let end = Infinity;
  for (const n of ctx.model.nodesOfType("identifier")) {
    if (!n || n.text !== root || n.startIndex < statement.endIndex || n.startIndex >= end || !inScope(n)) continue;
    let top: SyntaxNode = n;
    while (top.parent?.type === "attribute" && top.parent.childForFieldName("object")?.id === top.id) top = top.parent;
    const method = top.parent?.type === "call" && top.parent.childForFieldName("function")?.id === top.id;
    if ((top.id === n.id && device !== root) || assignedTarget(top) || method)
      end = Math.min(end, statementOf(n).startIndex);
  }
  const type = device.includes(".") ? "attribute" : "identifier";
  return ctx.model
    .nodesOfType(type)
    .filter(
      (n): n is SyntaxNode =>
        !!n && n.text === device && n.startIndex >= statement.endIndex && n.startIndex < end && inScope(n),
    );
}

/**
 * Uses of `self.X.attr` in the other methods of the class whose constructor `scope` calls the writer
 * with its parameter `arg`, kept as `self.X = arg` (or given `self.X` itself): every method runs
 * after the constructor. Silent where the class assigns `self.X` elsewhere or `self.X.attr` at all,
 * uses `self.X` otherwise than reading its attributes, calls a method of its own in the constructor
 * before the writer, or the module initialises CUDA at its top level.
 */
function methodUses(
  ctx: RuleContext,
  { scope, statement, arg, attr }: { scope: SyntaxNode; statement: SyntaxNode; arg: SyntaxNode; attr: string },
  mark: (use: SyntaxNode) => void,
): void {
  const cls = scope.parent?.parent;
  if (scope.childForFieldName("name")?.text !== "__init__" || cls?.type !== "class_definition") return;
  const keeps = new Set<string>();
  if (selfAttribute(arg)) keeps.add(arg.text);
  else if (arg.type === "identifier")
    for (const a of scope.descendantsOfType("assignment")) {
      const left = a?.childForFieldName("left");
      if (a?.childForFieldName("right")?.text === arg.text && left && selfAttribute(left)) keeps.add(left.text);
    }
  if (keeps.size !== 1 || initBefore(ctx, statement, true)) return;
  const kept = [...keeps][0];
  // A method of its own called before the writer runs before the write.
  for (const c of scope.descendantsOfType("call"))
    if (c && c.startIndex < statement.startIndex && c.childForFieldName("function")?.text.startsWith("self.")) return;
  const uses: SyntaxNode[] = [];
  for (const n of cls.descendantsOfType("attribute")) {
    if (!n || n.text !== kept) continue;
    const p = n.parent;
    const inInit = enclosingFunction(n)?.id === scope.id;
    if (p?.type === "attribute" && p.childForFieldName("object")?.id === n.id) {
      const method = p.parent?.type === "call" && p.parent.childForFieldName("function")?.id === p.id;
      const target = assignedTarget(p);
      if (p.text === `${kept}.${attr}` ? target : method) return;
      if (p.text === `${kept}.${attr}` && !inInit) uses.push(p);
      continue;
    }
    const keptHere =
      inInit &&
      p?.type === "assignment" &&
      p.childForFieldName("left")?.id === n.id &&
      p.childForFieldName("right")?.text === arg.text;
    if (!keptHere && n.id !== arg.id) return;
  }
  for (const u of uses) mark(u);
}

/** Whether `n` is (part of) an assignment's target. */
function assignedTarget(n: SyntaxNode): boolean {
  for (let c: SyntaxNode = n, p = n.parent; p; c = p, p = p.parent) {
    if ((p.type === "assignment" || p.type === "augmented_assignment") && p.childForFieldName("left")?.id === c.id)
      return true;
    if (p.type !== "pattern_list" && p.type !== "tuple_pattern" && p.type !== "attribute" && p.type !== "subscript")
      return false;
  }
  return false;
}

/**
 * Whether CUDA may have been initialised before `statement` in its function (or module level): an
 * init event of the model's timelines there, a `torch.cuda` call, a `.cuda()` or `.to()` move, or a
 * project function that initialises CUDA (ProjectLookup.callableInit); with `module` (a call in a
 * function, which the module's top level may call after initialising CUDA), also an init anywhere
 * at the module's top level. The timelines hold only the functions that matter to the
 * walk, hence the calls' own test.
 */
function initBefore(ctx: RuleContext, statement: SyntaxNode, module: boolean): boolean {
  const scope = enclosingFunction(statement);
  const before = (n: SyntaxNode) =>
    n.startIndex < statement.startIndex && (scope ? contains(scope, n) : !enclosingFunction(n));
  const hit = (e: { kind: string; node?: SyntaxNode | null }) => {
    if (!freezesVariable(e as never, VARIABLE) || !e.node) return false;
    return (module && !enclosingFunction(e.node)) || before(e.node);
  };
  if (ctx.model.events.some(hit) || ctx.model.functionTimelines.some((t) => t.events.some(hit))) return true;
  for (const c of scope ? scope.descendantsOfType("call") : ctx.model.nodesOfType("call")) {
    if (!c || !before(c)) continue;
    const fn = c.childForFieldName("function");
    const method = fn?.type === "attribute" ? fn.childForFieldName("attribute")?.text : undefined;
    const path = calleePath(ctx.model, c);
    if (method === "cuda" || method === "to" || path?.startsWith("torch.cuda.")) return true;
    if (path?.includes(".") && ctx.project?.isProjectFunction?.(path) && ctx.project.callableInit(path)) return true;
  }
  return false;
}

/** Whether `n` is an attribute of `self` (`self.cfg`), read from its syntax tree. */
function selfAttribute(n: SyntaxNode): boolean {
  return (
    n.type === "attribute" &&
    n.childForFieldName("object")?.type === "identifier" &&
    n.childForFieldName("object")?.text === "self"
  );
}
