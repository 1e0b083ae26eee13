/**
 * Parameters that a function (or a class's constructor) passes on as a CUDA device ordinal as they
 * are, with the literal default of their signature: what GPU017 compares with the machine where a
 * caller passes a literal integer (`PoseEstimator(1)`, `__init__(self, gpu_id)` calling
 * `torch.cuda.set_device(gpu_id)`), or passes nothing and the default is a literal.
 */
import type { SyntaxNode } from "./parser";
import type { DeviceSlot } from "./devices";
import { SET_DEVICE_PATHS } from "../frameworks";

/** A parameter that reaches a device use unchanged (ProjectLookup.callableOrdinalParams). */
export interface OrdinalParam {
  /** The position a call fills (after `self` for a constructor); -1 for a keyword-only parameter. */
  index: number;
  name: string;
  /** The signature's default when it is a literal non-negative integer (`gpu_id=1`), else null. */
  default: number | null;
  /** How the device use names it, for messages: `torch.cuda.set_device()`. */
  form: string;
  /** The module's code names CUDA_VISIBLE_DEVICES (a string holds it): the ordinal may be relative to a selection. */
  visible: boolean;
  /** The use's place: 0-based rows and columns of its start and end. */
  start: [number, number];
  end: [number, number];
}

/** The slot forms whose ordinal certainly names a CUDA device (no other device type, no list). */
function certainForm(slot: DeviceSlot, torch: boolean): string | null {
  const f = slot.form;
  if (slot.list) return null;
  if ([...SET_DEVICE_PATHS, "torch.cuda.device"].some((p) => f === `${p}()`)) return f;
  if (f === 'torch.device("cuda", …)' || f === 'f"cuda:{…}"' || f === '"cuda:{}".format()') return f;
  if (f === '"cuda:" + …') return slot.ordinal.parent?.text.includes("%") ? '"cuda:%d" % …' : f;
  // `torch.device(x)` with the value itself (not the ordinal of an `f"{kind}:{x}"` string).
  if (f === "torch.device()") return slot.ordinal.parent?.type === "argument_list" ? f : null;
  // A tensor's or module's `.to(x)` / `.cuda(x)` and a torch call's `device=x`: torch's only.
  if (torch && (f === ".to()" || f === ".cuda()" || f === "device=")) return f;
  return null;
}

/**
 * The parameters of `def` that reach one of `slots` (python/devices.ts `deviceSlots`) unchanged:
 * the slot's value is the parameter (or `int(p)` / `str(p)`), or, in a constructor (`cls` given),
 * `self.X` where the constructor's `self.X = p` is the attribute's only assignment in the class,
 * made before the use with no call between that could change it (a method of `self`, `super()`,
 * a call given `self`). Silent for a parameter bound anywhere in `def` (an assignment, a `for`,
 * `with ... as`, `global`), a use inside a `try` (a handler may fall back), a function that names
 * `device_count` or compares the parameter with anything but a literal (a guard), a decorated
 * function or class (the decorator may run it elsewhere: `@torch.…` decorators aside), and
 * slots of nested functions.
 * @param torch the module imports torch (`.to(x)`, `.cuda(x)` are torch's then)
 * @param visible the module's code names CUDA_VISIBLE_DEVICES (kept with each answer)
 */
export function ordinalParams(
  def: SyntaxNode,
  slots: readonly DeviceSlot[],
  torch: boolean,
  cls?: SyntaxNode,
  visible = false,
): OrdinalParam[] {
  const body = def.childForFieldName("body");
  if (!body || def.text.includes("device_count") || decorated(def) || (cls && decorated(cls))) return [];
  const params = signature(def);
  const shift = cls ? 1 : 0;
  const out: OrdinalParam[] = [];
  for (const slot of slots) {
    if (slot.ordinal.startIndex < body.startIndex || slot.ordinal.endIndex > body.endIndex) continue;
    const form = certainForm(slot, torch);
    if (!form || ownerDef(slot.ordinal)?.id !== def.id || inTry(slot.ordinal, def)) continue;
    let o: SyntaxNode | null = slot.ordinal;
    const conv = o.type === "call" ? o.childForFieldName("function")?.text : undefined;
    if (conv === "int" || conv === "str") {
      const args = o.childForFieldName("arguments")?.namedChildren.filter((a) => a && a.type !== "comment") ?? [];
      o = args.length === 1 ? args[0] : null;
    }
    let name: string | null = null;
    if (o?.type === "identifier") name = o.text;
    else if (cls && o?.type === "attribute" && o.childForFieldName("object")?.text === params[0]?.name)
      name = keptParam(o, body, cls, params[0].name);
    const p = name ? params.find((q) => q.name === name) : undefined;
    if (
      !o ||
      !p ||
      (cls && p === params[0]) ||
      bound(def, p.name) ||
      guarded(body, o.type === "identifier" ? [p.name] : [p.name, o.text]) ||
      otherCondition(body, slot.ordinal, params, p.name, cls ? params[0]?.name : undefined)
    )
      continue;
    if (out.some((d) => d.name === p.name)) continue;
    out.push({
      index: p.index < 0 ? -1 : p.index - shift,
      name: p.name,
      default: p.default,
      form,
      visible,
      start: [slot.ordinal.startPosition.row, slot.ordinal.startPosition.column],
      end: [slot.ordinal.endPosition.row, slot.ordinal.endPosition.column],
    });
  }
  return out;
}

/** A parameter of a signature: its name, call position (-1: keyword-only) and literal integer default. */
interface Param {
  name: string;
  index: number;
  default: number | null;
}

/** The named parameters of `def`, in order; after a `*args` or `*` they are keyword-only. */
function signature(def: SyntaxNode): Param[] {
  const out: Param[] = [];
  let index = 0;
  let positional = true;
  for (const p of def.childForFieldName("parameters")?.namedChildren ?? []) {
    if (!p || p.type === "comment") continue;
    if (p.type === "list_splat_pattern" || p.type === "keyword_separator") positional = false;
    if (/^(list_splat_pattern|dictionary_splat_pattern|keyword_separator|positional_separator)$/.test(p.type)) continue;
    const id =
      p.type === "identifier"
        ? p
        : (p.childForFieldName("name") ?? p.namedChildren.find((c) => c?.type === "identifier") ?? null);
    const value = p.childForFieldName("value");
    const d = value?.type === "integer" && /^\d+$/.test(value.text) ? Number(value.text) : null;
    out.push({ name: id?.type === "identifier" ? id.text : "", index: positional ? index++ : -1, default: d });
  }
  return out;
}

/** The name an expression's attribute chain starts from (`torch` for `torch.no_grad()`), or null. */
function rootName(n: SyntaxNode | null | undefined): string | null {
  let x = n;
  while (x && (x.type === "call" || x.type === "attribute"))
    x = x.type === "call" ? x.childForFieldName("function") : x.childForFieldName("object");
  return x?.type === "identifier" ? x.text : null;
}

/** Whether `n` (a function or class definition) carries a decorator that is not torch's (`@torch.no_grad()`). */
function decorated(n: SyntaxNode): boolean {
  const parent = n.parent;
  if (parent?.type !== "decorated_definition") return false;
  return parent.namedChildren.some((d) => d?.type === "decorator" && rootName(d.namedChildren[0]) !== "torch");
}

/** The function or lambda that holds `n`, or null. */
function ownerDef(n: SyntaxNode): SyntaxNode | null {
  let owner: SyntaxNode | null = n.parent;
  while (owner && owner.type !== "function_definition" && owner.type !== "lambda") owner = owner.parent;
  return owner;
}

/** Whether `n` is inside the body of a `try` statement within `def` (a handler may catch the failure). */
function inTry(n: SyntaxNode, def: SyntaxNode): boolean {
  for (let c: SyntaxNode = n, p = n.parent; p && p.id !== def.id; c = p, p = p.parent)
    if (p.type === "try_statement" && p.childForFieldName("body")?.id === c.id) return true;
  return false;
}

/**
 * The parameter that `self.X` (`attr`) holds at the use: the constructor's `self.X = p`, when it is
 * the class's only binding of `self.X`, ends before the use, and no call between could change it.
 */
function keptParam(attr: SyntaxNode, body: SyntaxNode, cls: SyntaxNode, self: string): string | null {
  const bindings = cls
    .descendantsOfType(["assignment", "augmented_assignment", "for_statement", "named_expression"])
    .filter((a) => !!a && targetsText(a, attr.text));
  if (bindings.length !== 1 || bindings[0]!.type !== "assignment") return null;
  const a = bindings[0]!;
  const right = a.childForFieldName("right");
  if (a.childForFieldName("left")?.text !== attr.text || right?.type !== "identifier") return null;
  if (a.startIndex < body.startIndex || a.endIndex > attr.startIndex) return null;
  if (cls.descendantsOfType("identifier").some((n) => n?.text === "setattr" || n?.text === "__dict__")) return null;
  for (const c of body.descendantsOfType("call")) {
    if (!c || c.startIndex < a.endIndex || c.endIndex > attr.startIndex) continue;
    const fn = c.childForFieldName("function")?.text ?? "";
    const args = c.childForFieldName("arguments")?.namedChildren ?? [];
    if (fn.startsWith(`${self}.`) || fn.startsWith("super") || args.some((x) => x?.text === self)) return null;
  }
  return right.text;
}

/** Whether the assignment-like node `a` binds the target text `t` (as its whole target or inside a tuple target). */
function targetsText(a: SyntaxNode, t: string): boolean {
  const left = a.childForFieldName(a.type === "named_expression" ? "name" : "left");
  if (!left) return false;
  if (left.text === t) return true;
  return left.descendantsOfType(["attribute", "identifier"]).some((x) => x?.text === t);
}

/** Whether `def` binds `name` anywhere but its signature (assignment, `for`, `with ... as`, walrus, `global`, `del`, `except ... as`). */
function bound(def: SyntaxNode, name: string): boolean {
  const body = def.childForFieldName("body");
  if (!body) return true;
  for (const ref of body.descendantsOfType("identifier")) {
    if (!ref || ref.text !== name) continue;
    // A name in a target, possibly inside a tuple or list of targets (not `x.name`, `name[i]`, `f(name=…)`).
    for (let c: SyntaxNode = ref, p = ref.parent; p; c = p, p = p.parent) {
      const t = p.type;
      if (t === "global_statement" || t === "nonlocal_statement" || t === "delete_statement") return true;
      if (
        (t === "assignment" || t === "augmented_assignment" || t === "for_statement" || t === "for_in_clause") &&
        p.childForFieldName("left")?.id === c.id
      )
        return true;
      if (t === "named_expression" && p.childForFieldName("name")?.id === c.id) return true;
      if (t === "as_pattern_target" || (t === "as_pattern" && p.childForFieldName("alias")?.id === c.id)) return true;
      if (!TARGET_PARTS.has(t)) break;
    }
  }
  return false;
}

/** The nodes a target name may sit in below its binding statement (`a, (b, c) = …`, `for [x, *y] in …`). */
const TARGET_PARTS = new Set([
  "pattern_list",
  "tuple_pattern",
  "list_pattern",
  "list_splat_pattern",
  "tuple",
  "list",
  "parenthesized_expression",
  "expression_list",
  "list_splat",
  "assignment",
  "augmented_assignment",
  "for_statement",
  "for_in_clause",
  "named_expression",
  "as_pattern",
  "global_statement",
  "nonlocal_statement",
  "delete_statement",
]);

/**
 * Whether a condition in `body` before `use` (an `if`, `elif`, `while` or `x if c else y`, around
 * the use or ending in an early `return`) names another parameter than `name`, or an attribute of
 * `self`: a caller may pass a value that keeps the use from running
 * (`get_device(use_cpu=True, gpu_id=5)`).
 */
function otherCondition(
  body: SyntaxNode,
  use: SyntaxNode,
  params: readonly Param[],
  name: string,
  self: string | undefined,
): boolean {
  const others = new Set(params.filter((q) => q.name && q.name !== name).map((q) => q.name));
  for (const n of body.descendantsOfType([
    "if_statement",
    "elif_clause",
    "while_statement",
    "conditional_expression",
  ])) {
    if (!n || n.startIndex >= use.startIndex) continue;
    const condition = n.type === "conditional_expression" ? n.namedChildren[1] : n.childForFieldName("condition");
    if (!condition) continue;
    for (const id of [condition, ...condition.descendantsOfType("identifier")]) {
      if (id?.type !== "identifier") continue;
      if (id.parent?.type === "attribute" && id.parent.childForFieldName("attribute")?.id === id.id) continue;
      if (others.has(id.text) && id.text !== self) return true;
      if (id.text === self && id.parent?.type === "attribute") return true;
    }
  }
  return false;
}

/**
 * Whether `body` compares one of `names` (a parameter, `self.X`) with anything but a literal
 * (`if gpu_id < n_gpus:`): a guard that may keep the use from running with an ordinal that does not exist.
 */
function guarded(body: SyntaxNode, names: readonly string[]): boolean {
  for (const cmp of body.descendantsOfType("comparison_operator")) {
    if (!cmp) continue;
    const operands = cmp.namedChildren.filter((x): x is SyntaxNode => !!x && x.type !== "comment");
    if (!operands.some((x) => names.some((n) => x.text === n || x.text.includes(n)))) continue;
    const literal = (x: SyntaxNode) =>
      names.includes(x.text) ||
      x.type === "integer" ||
      x.type === "none" ||
      x.type === "true" ||
      x.type === "false" ||
      (x.type === "unary_operator" && x.namedChildren[0]?.type === "integer");
    if (!operands.every(literal)) return true;
  }
  return false;
}
