/**
 * Ray tasks and actors of a module: the functions and classes decorated with `@ray.remote`, the GPUs
 * each asks for (`num_gpus`), and whether its body uses CUDA. Read by GPU033 (CUDA_VISIBLE_DEVICES
 * written in a task) and GPU034 (a task without GPUs that uses CUDA).
 *
 * Ray's documented behaviour (docs.ray.io, Ray Core, "Accelerator Support"): a task or actor gets
 * the GPUs it asks for with `num_gpus` (default 0), and Ray sets CUDA_VISIBLE_DEVICES in its worker
 * to those GPUs' ids before the task runs, unless RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES is set.
 */
import type { SyntaxNode } from "./parser";
import { stringValue } from "./parser";
import type { ModuleModel } from "./model";
import { cudaDeviceOrdinal } from "../frameworks";

/** One `@ray.remote` function (a task) or class (an actor). */
export interface RemoteDefinition {
  /** The `function_definition` or `class_definition`. */
  def: SyntaxNode;
  /** Its name. */
  name: string;
  kind: "task" | "actor";
  /** The `@ray.remote` / `@ray.remote(...)` decorator node. */
  decorator: SyntaxNode;
  /**
   * The GPUs it asks for: 0 when the decorator gives no `num_gpus` (Ray's default), the number for a
   * literal, or null when unknown (a computed value, `**kwargs`, or `Name.options(...)` used in the
   * file, which may override the decorator).
   */
  numGpus: number | null;
  /**
   * The file itself starts it (`Name.remote(...)` with no `.options(...)`). A definition only
   * started elsewhere may get its resources there (`Name.options(num_gpus=1).remote()` in another
   * module), so what its decorator says is not what it runs with.
   */
  startedHere: boolean;
}

/** The `@ray.remote` definitions of the module, in source order (nested ones too; found once per model). Never throws. */
export function remoteDefinitions(model: ModuleModel): RemoteDefinition[] {
  return (model.derived.remotes ??= compute(model));
}

function compute(model: ModuleModel): RemoteDefinition[] {
  if (!model.text.includes("remote")) return [];
  const out: RemoteDefinition[] = [];
  for (const dd of model.nodesOfType("decorated_definition")) {
    const def = dd.childForFieldName("definition");
    if (!def || (def.type !== "function_definition" && def.type !== "class_definition")) continue;
    const name = def.childForFieldName("name")?.text;
    if (!name) continue;
    for (const dec of dd.namedChildren) {
      if (dec?.type !== "decorator") continue;
      const expr = dec.namedChildren[0];
      if (!expr) continue;
      const isCall = expr.type === "call";
      const callee = isCall ? expr.childForFieldName("function") : expr;
      if (model.resolve(callee) !== "ray.remote") continue;
      let numGpus: number | null = 0;
      if (isCall) {
        for (const a of expr.childForFieldName("arguments")?.namedChildren ?? []) {
          if (a?.type === "dictionary_splat" || a?.type === "list_splat") numGpus = null;
          if (a?.type !== "keyword_argument" || a.childForFieldName("name")?.text !== "num_gpus") continue;
          const v = a.childForFieldName("value");
          numGpus =
            v && (v.type === "integer" || v.type === "float") && /^[0-9._]+$/.test(v.text)
              ? Number(v.text.replace(/_/g, ""))
              : null;
        }
      }
      if (numGpus !== null && usesOptions(model, name)) numGpus = null;
      out.push({
        def,
        name,
        kind: def.type === "class_definition" ? "actor" : "task",
        decorator: dec,
        numGpus,
        startedHere: callsMethod(model, name, "remote"),
      });
      break;
    }
  }
  return out;
}

/** Whether the file calls `name.options(...)` (Ray's per-call override of the decorator's resources). */
function usesOptions(model: ModuleModel, name: string): boolean {
  return callsMethod(model, name, "options");
}

/** Whether the file calls `name.<method>(...)`. */
function callsMethod(model: ModuleModel, name: string, method: string): boolean {
  return model.nodesOfType("call").some((c) => {
    const f = c.childForFieldName("function");
    return (
      f?.type === "attribute" &&
      f.childForFieldName("attribute")?.text === method &&
      f.childForFieldName("object")?.text === name
    );
  });
}

/** Whether `node` lies inside `def` (or is it). */
export function inside(node: SyntaxNode, def: SyntaxNode): boolean {
  return node.startIndex >= def.startIndex && node.endIndex <= def.endIndex;
}

/**
 * The first place in `def` that puts work on a CUDA device, or null: a `"cuda"`/`"cuda:N"` string
 * passed as an argument, a `.cuda()` call, a `torch.cuda.*` call other than the availability and
 * count queries, or a `vllm.LLM(...)` engine. A body that asks `torch.cuda.is_available()` or
 * `device_count()` is taken to handle the no-GPU case and yields null.
 */
export function cudaUseIn(model: ModuleModel, def: SyntaxNode): SyntaxNode | null {
  let first: SyntaxNode | null = null;
  const take = (n: SyntaxNode) => {
    if (!first || n.startIndex < first.startIndex) first = n;
  };
  for (const call of model.nodesOfType("call")) {
    if (!inside(call, def)) continue;
    const fn = call.childForFieldName("function");
    const path = model.resolve(fn);
    if (path && /^torch\.cuda\.(is_available|device_count)$/.test(path)) return null;
    if (path === "vllm.LLM" || (path?.startsWith("torch.cuda.") && !path.includes("()"))) {
      take(call);
      continue;
    }
    if (fn?.type === "attribute" && fn.childForFieldName("attribute")?.text === "cuda" && path !== "torch.cuda") {
      take(call);
      continue;
    }
    for (const a of call.childForFieldName("arguments")?.namedChildren ?? []) {
      const v = a?.type === "keyword_argument" ? a.childForFieldName("value") : a;
      if (v?.type !== "string") continue;
      const s = stringValue(v);
      if (s !== null && (s === "cuda" || (cudaDeviceOrdinal(s) ?? -1) >= 0)) take(v);
    }
  }
  return first;
}
