/**
 * Device strings whose index code writes to CUDA_VISIBLE_DEVICES (`os.environ["CUDA_VISIBLE_DEVICES"]
 * = args.device.split(":")[1]`): after such a write the GPU is the process's cuda:0, so the string
 * itself (`cuda:1`) names a device that no longer exists. GPU005 follows them in the writing file;
 * {@link indexWriters} summarises the functions of a module that write the index of a parameter (or
 * of one of its attributes, `cfg.device`), for the project index (python/project.ts) and GPU005's
 * calls of those functions.
 */
import type { SyntaxNode } from "./parser";
import { enclosingFunction, stringValue } from "./parser";
import type { ModuleModel } from "./model";
import { envWritesAnywhere } from "./model";
import type { EnvWriteEvent } from "./events";
import type { Range } from "../types";
import { stateBefore, statesInFunction } from "./timeline";
import { callArgs, calleePath } from "../rules/shared/py";
import { namesBoundIn, positionalParams } from "./devices";

/**
 * The device string whose index a written value takes: `args.device.split(":")[1]` (or `[-1]`, or
 * `.split(":", 1)[1]`), `args.device.replace("cuda:", "")`, `str(torch.device(d).index)`, also as a
 * branch of `x if cond else y` and inside `str()`. Only a name or an attribute (`device`,
 * `args.device`, `self.cfg.device`), whose later uses can be matched by their text; null otherwise.
 */
export function deviceOfIndex(model: ModuleModel, value: SyntaxNode): SyntaxNode | null {
  let v: SyntaxNode | null = value;
  if (v.type === "conditional_expression") {
    for (const branch of [v.namedChildren[0], v.namedChildren[2]]) {
      const d = branch ? deviceOfIndex(model, branch) : null;
      if (d) return d;
    }
    return null;
  }
  if (v.type === "call" && v.childForFieldName("function")?.text === "str") v = callArgs(v).positional[0] ?? null;
  if (!v) return null;
  let device: SyntaxNode | null = null;
  if (v.type === "subscript") {
    // d.split(":")[1], d.split(":", 1)[1], d.split(":")[-1]
    const index = v.childForFieldName("subscript")?.text;
    const call = v.childForFieldName("value");
    const fn = call?.type === "call" ? call.childForFieldName("function") : null;
    if (
      (index === "1" || index === "-1") &&
      fn?.type === "attribute" &&
      fn.childForFieldName("attribute")?.text === "split"
    ) {
      const sep = callArgs(call!).positional[0];
      if (sep && stringValue(sep) === ":") device = fn.childForFieldName("object");
    }
  } else if (v.type === "call") {
    // d.replace("cuda:", "")
    const fn = v.childForFieldName("function");
    const { positional } = callArgs(v);
    if (
      fn?.type === "attribute" &&
      fn.childForFieldName("attribute")?.text === "replace" &&
      stringValue(positional[0]) === "cuda:" &&
      stringValue(positional[1]) === ""
    )
      device = fn.childForFieldName("object");
  } else if (v.type === "attribute" && v.childForFieldName("attribute")?.text === "index") {
    // torch.device(d).index
    const call = v.childForFieldName("object");
    if (call?.type === "call" && /(^|\.)device$/.test(call.childForFieldName("function")?.text ?? ""))
      device = callArgs(call).positional[0] ?? null;
    // dev.index, where dev = torch.device(d): dev itself is the device that no longer exists
    else if (call?.type === "identifier") {
      const bound = model.valueOf(call.text, call.startIndex);
      if (bound?.type === "call" && calleePath(model, bound) === "torch.device") device = call;
    }
  }
  return device && (device.type === "identifier" || device.type === "attribute") ? device : null;
}

/**
 * Whether a CUDA-initialising call ran before the write (on the module's timeline, or in the
 * timeline of a function the module never calls): CUDA then keeps the GPUs it saw.
 */
export function writeFrozen(model: ModuleModel, w: EnvWriteEvent): boolean {
  const same = (e: { kind: string; statement?: SyntaxNode | null; variable?: string }) =>
    e.kind === "envWrite" && e.statement?.id === w.statement?.id && e.variable === w.variable;
  const onModule = model.events.find(same);
  if (onModule) return !!stateBefore(model, onModule as EnvWriteEvent).frozenBy;
  for (const fn of model.functionTimelines) {
    const e = fn.events.find(same);
    if (e) return !!statesInFunction(model, fn)(e as EnvWriteEvent).frozenBy;
  }
  return false;
}

/** A module-level function that writes the index of its parameter (or of an attribute of it) to CUDA_VISIBLE_DEVICES. */
export interface IndexWrite {
  /** The parameter's position and name. */
  index: number;
  name: string;
  /** The attribute whose index is written (`device` of `cfg.device`), or null: the parameter itself. */
  attr: string | null;
  /** The write's 1-based line, and its statement's range. */
  line: number;
  range: Range;
}

/**
 * The module-level functions of `model` that write to CUDA_VISIBLE_DEVICES the index of a device
 * string they are given ({@link deviceOfIndex}: `param.split(":")[1]`, `cfg.device.split(":")[1]`),
 * by name. Silent where the function rebinds the parameter, assigns the attribute, uses the
 * parameter after the write otherwise than reading that attribute (a call may renumber it:
 * `cfg.device = "cuda:0"`), or initialised CUDA before the write (which then changes nothing).
 */
export function indexWriters(model: ModuleModel): Map<string, IndexWrite> {
  const out = new Map<string, IndexWrite>();
  const defs = new Map<number, string>();
  for (const [name, def] of model.functions) defs.set(def.id, name);
  for (const w of envWritesAnywhere(model)) {
    if (w.variable !== "CUDA_VISIBLE_DEVICES" || !w.value || !w.statement || w.literal !== null) continue;
    const def = enclosingFunction(w.statement);
    const name = def ? defs.get(def.id) : undefined;
    if (!def || name === undefined || out.has(name)) continue;
    const device = deviceOfIndex(model, boundValue(def, w.value, w.statement));
    const root = device?.type === "attribute" ? device.childForFieldName("object") : device;
    if (!device || root?.type !== "identifier") continue;
    const attr = device.type === "attribute" ? (device.childForFieldName("attribute")?.text ?? null) : null;
    const index = positionalParams(def).indexOf(root.text);
    if (index < 0 || namesBoundIn(def).has(root.text) || writeFrozen(model, w)) continue;
    if (attr !== null && !onlyReadsAfter(def, w.statement, root.text, attr)) continue;
    out.set(name, { index, name: root.text, attr, line: w.statement.startPosition.row + 1, range: w.range });
  }
  return out;
}

/**
 * `value`, or where it is a name (`str(name)`) that `def` assigns once, before `stmt` and in no
 * nested function, the value assigned (`index = cfg.device.split(":")[1]`).
 */
function boundValue(def: SyntaxNode, value: SyntaxNode, stmt: SyntaxNode): SyntaxNode {
  const name =
    value.type === "call" && value.childForFieldName("function")?.text === "str"
      ? callArgs(value).positional[0]
      : value;
  if (name?.type !== "identifier") return value;
  const sets = def
    .descendantsOfType(["assignment", "augmented_assignment", "for_statement", "named_expression"])
    .filter((a) => a?.childForFieldName(a.type === "named_expression" ? "name" : "left")?.text === name.text);
  const one = sets.length === 1 ? sets[0] : null;
  const right = one?.type === "assignment" ? one.childForFieldName("right") : null;
  return right && one!.endIndex <= stmt.startIndex && enclosingFunction(one!)?.id === def.id ? right : value;
}

/** Whether every mention of `name` in `def` after `stmt` reads `name.attr` (no assignment to it, no other use). */
function onlyReadsAfter(def: SyntaxNode, stmt: SyntaxNode, name: string, attr: string): boolean {
  for (const n of def.descendantsOfType("identifier")) {
    if (!n || n.text !== name) continue;
    const p = n.parent;
    const read =
      p?.type === "attribute" &&
      p.childForFieldName("object")?.id === n.id &&
      p.childForFieldName("attribute")?.text === attr &&
      !isAssigned(p);
    if (!read && (n.startIndex >= stmt.endIndex || (p?.type === "attribute" && isAssigned(p)))) return false;
  }
  return true;
}

/** Whether `n` is (part of) the target of an assignment. */
function isAssigned(n: SyntaxNode): boolean {
  for (let c: SyntaxNode = n, p = n.parent; p; c = p, p = p.parent) {
    if ((p.type === "assignment" || p.type === "augmented_assignment") && p.childForFieldName("left")?.id === c.id)
      return true;
    if (p.type !== "pattern_list" && p.type !== "tuple_pattern" && p.type !== "attribute") return false;
  }
  return false;
}
