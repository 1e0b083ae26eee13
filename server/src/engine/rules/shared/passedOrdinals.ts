import { namesVisibleDevices, type PassedOrdinalUse } from "../../python/model";
import type { SyntaxNode } from "../../python/parser";
import type { RuleContext } from "../../rule";
import { envWrites } from "../../rule";
import { constructorOf, deviceSlots } from "../../python/devices";
import { ordinalParams } from "../../python/passedOrdinals";
import { callArgs, calleePath } from "./py";

/** A literal ordinal that a call hands to a parameter its callee uses as a CUDA device ordinal. */
export interface PassedOrdinal {
  /** The literal argument, or the call where the parameter's default is used. */
  node: SyntaxNode;
  ordinal: number;
  /** The call passes the literal (false: the callee's default, the call passing nothing). */
  passed: boolean;
  /** The callee as written. */
  callee: string;
  /** The callee's use; `file` absent for a function of this file. */
  use: Omit<PassedOrdinalUse, "file"> & { file?: string };
}

/**
 * Names in a condition that may keep a call from running on a machine with fewer GPUs
 * (`if torch.cuda.device_count() > 1:`, `if args.num_gpus > 1:`, `len(gpus)`), tested on each
 * identifier of the condition's syntax tree.
 */
const COUNT_NAME = /device_count|^n_?gpus?$|num_?gpus?|gpu_?count|world_size|^len$/i;

/** Names in a decorator that may skip a test or function on a machine with few GPUs (`@skipIf`, `@require_multi_gpu`). */
const SKIP_DECORATOR_NAME = /device_count|gpu|cuda|skip|require|distributed|world_size/i;

/** Names that count GPUs or skip a test, before the call in its function (`self.skipTest`, `pytest.skip`, `skip_if_*`). */
const SKIP_BEFORE_NAME = /^(device_count|skipTest|skip)$|^skip_if/;

/** The identifiers of `node`'s syntax tree (names, attributes, called names) that end at or before `end` (a character index). */
function identifiersIn(node: SyntaxNode, end = Infinity): string[] {
  return node.descendantsOfType("identifier").flatMap((n) => (n && n.endIndex <= end ? [n.text] : []));
}

/**
 * The calls of the module that pass a literal non-negative integer (`PoseEstimator(1)`,
 * `Estimator(gpu_id=1)`), or nothing where the callee's signature has a literal default (a callee
 * of this file only), to a parameter that a function or class of this file, or of another project module
 * (ProjectLookup.callableOrdinalParams), uses as a CUDA device ordinal unchanged. Silent where the
 * module names CUDA_VISIBLE_DEVICES in its code (a string or a notebook's `%env`), or the callee's module does (the
 * ordinal is then relative to a selection: GPU004), the module is a test module (or sets
 * `pytestmark`), the call is in a `try` body or under a condition that counts GPUs (or in a function
 * that a decorator may skip), or a `*args` / `**kwargs` may fill the parameter.
 */
export function passedOrdinals(ctx: RuleContext, minOrdinal = 0): PassedOrdinal[] {
  const model = ctx.model;
  // A test module's GPU needs are set by its suite (markers, fixtures, conftest skips) the file may not show.
  if (ctx.testModule || model.text.includes("pytestmark")) return [];
  if (
    model.text.includes("CUDA_VISIBLE_DEVICES") &&
    (envWrites(model).some((w) => w.variable === "CUDA_VISIBLE_DEVICES") || namesVisibleDevices(model))
  )
    return [];
  const project = ctx.project;
  const out: PassedOrdinal[] = [];
  let slots: ReturnType<typeof deviceSlots> | undefined;
  const own = new Map<number, Array<Omit<PassedOrdinalUse, "file">>>();
  for (const call of model.nodesOfType("call")) {
    const fn = call?.childForFieldName("function");
    if (!call || !fn || (fn.type !== "identifier" && fn.type !== "attribute")) continue;
    const local = fn.type === "identifier" && !model.symbols.has(fn.text);
    const cls = local && !model.functions.has(fn.text) ? model.classes.get(fn.text) : undefined;
    const def = local ? (model.functions.get(fn.text) ?? (cls ? constructorOf(cls) : undefined)) : undefined;
    let uses: ReadonlyArray<PassedOrdinal["use"]> | null = null;
    if (def) {
      let kept = own.get(def.id);
      if (!kept) {
        slots ??= deviceSlots(model);
        kept = ordinalParams(def, slots, model.frameworks.has("torch"), cls, false).map((d) => ({
          ...d,
          where: ctx.where(d.start[0]),
        }));
        own.set(def.id, kept);
      }
      uses = kept;
    } else if (!local && project?.callableOrdinalParams) {
      // Another module's callee is parsed for its summary: only for a call that passes a literal of
      // at least `minOrdinal` (its defaults are not followed; every call of an imported function
      // parsed python3-torch's modules again: 1.2 s of CPU with the machine known).
      if (!passesLiteral(call, minOrdinal)) continue;
      const path = calleePath(model, call);
      if (!path?.includes(".") || project.isProjectFunction?.(path) === false) continue;
      uses = project.callableOrdinalParams(path);
    }
    if (!uses?.length || uses.some((u) => u.visible) || guardedCall(call)) continue;
    const { positional, keywords } = callArgs(call);
    const splat = positional.findIndex((a) => a.type === "list_splat" || a.type === "dictionary_splat");
    const kwSplat = positional.some((a) => a.type === "dictionary_splat");
    for (const use of uses) {
      const byPosition = use.index >= 0 && (splat < 0 || use.index < splat) ? positional[use.index] : undefined;
      const arg = keywords.get(use.name) ?? byPosition;
      let ordinal: number | null = null;
      if (arg) ordinal = arg.type === "integer" && /^\d+$/.test(arg.text) ? Number(arg.text) : null;
      else if (def && splat < 0 && !kwSplat && (use.index < 0 || positional.length <= use.index)) ordinal = use.default;
      if (ordinal === null || !Number.isSafeInteger(ordinal)) continue;
      const callee = fn.text.length > 40 ? `${fn.text.slice(0, 37)}...` : fn.text;
      out.push({ node: arg ?? call, ordinal, passed: !!arg, callee, use });
    }
  }
  return out;
}

/** Whether `call` passes a non-negative integer literal of at least `min`, by position or keyword. */
function passesLiteral(call: SyntaxNode, min: number): boolean {
  const { positional, keywords } = callArgs(call);
  return [...positional, ...keywords.values()].some(
    (a) => a.type === "integer" && /^\d+$/.test(a.text) && Number(a.text) >= min,
  );
}

/**
 * Whether `call` is in the body of a `try` (a handler may fall back), under a condition that counts
 * GPUs, or in a function or class that a decorator may skip or that counts GPUs, skips or asserts before it.
 */
function guardedCall(call: SyntaxNode): boolean {
  for (let c: SyntaxNode = call, p = call.parent; p; c = p, p = p.parent) {
    if (p.type === "try_statement" && p.childForFieldName("body")?.id === c.id) return true;
    if (p.type === "if_statement" || p.type === "while_statement") {
      const conditions = [p.childForFieldName("condition")];
      for (const e of p.namedChildren) if (e?.type === "elif_clause") conditions.push(e.childForFieldName("condition"));
      if (conditions.some((x) => x && identifiersIn(x).some((n) => COUNT_NAME.test(n)))) return true;
    }
    if (
      (p.type === "conditional_expression" || p.type === "boolean_operator") &&
      identifiersIn(p).some((n) => COUNT_NAME.test(n))
    )
      return true;
    // A test or helper that a decorator may skip (`@skipIf(torch.cuda.device_count() < 2)`,
    // `@require_multi_gpu`), or that counts GPUs or skips itself before the call.
    if (p.type === "function_definition" || p.type === "class_definition") {
      const decorators =
        p.parent?.type === "decorated_definition"
          ? p.parent.namedChildren.filter((d): d is SyntaxNode => d?.type === "decorator")
          : [];
      if (decorators.some((d) => identifiersIn(d).some((n) => SKIP_DECORATOR_NAME.test(n)))) return true;
      if (identifiersIn(p, call.startIndex).some((n) => SKIP_BEFORE_NAME.test(n))) return true;
    }
  }
  return false;
}
