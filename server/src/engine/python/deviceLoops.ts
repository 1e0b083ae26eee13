/**
 * Loops over the visible GPUs: a program that walks every device the process sees and puts work
 * on each (`for dev in cuda.gpus: with dev: ...`, `for i in range(torch.cuda.device_count()):
 * model.to(f"cuda:{i}")`) spreads its work over the GPUs itself, in one process. GPU022 reads it
 * so (launch/script.ts `launchedScriptFacts`: `loopsOverDevices`).
 *
 * Library forms, as their documentation gives them:
 * - Numba: `numba.cuda.gpus` is "the list of all CUDA devices" seen by the process, each a context
 *   manager that makes it current (`with cuda.gpus[i]:`), and `numba.cuda.select_device(device_id)`
 *   "creates a new CUDA context for the selected device_id" (Numba documentation, "Device
 *   management", https://numba.readthedocs.io/en/stable/cuda/device-management.html);
 *   `numba.cuda.list_devices()` returns the same devices.
 * - CuPy: `cupy.cuda.runtime.getDeviceCount()` and `cupy.cuda.Device(i)` as the context that makes
 *   device i current (CuPy documentation, "Multi-GPU":
 *   https://docs.cupy.dev/en/stable/user_guide/basic.html#current-device).
 * - PyTorch: `torch.cuda.device_count()`, and the device slots of devices.ts {@link deviceSlots}
 *   (`torch.device(f"cuda:{i}")`, `.to(i)`, `.cuda(i)`, `torch.cuda.set_device(i)`,
 *   `torch.cuda.device(i)`); queries such as `get_device_name(i)` put no work on the device and do
 *   not count.
 */
import type { SyntaxNode } from "./parser";
import { enclosingFunction } from "./parser";
import type { ModuleModel } from "./model";
import { deviceSlots } from "./devices";
import { DEVICE_QUERY_PATHS } from "../frameworks";
import { callArgs, calleePath, contains } from "../rules/shared/py";

/** Calls that return the number of GPUs the process sees. */
const COUNTS: ReadonlySet<string> = new Set([
  "torch.cuda.device_count",
  "torch.accelerator.device_count",
  "cupy.cuda.runtime.getDeviceCount",
]);
/** Numba's list of the visible devices (an attribute) and the call that returns it. */
const NUMBA_GPUS = "numba.cuda.gpus";
const NUMBA_LIST = "numba.cuda.list_devices";
/** Calls that make device `x` (their first argument) current. */
const SELECTS: ReadonlySet<string> = new Set([
  "numba.cuda.select_device",
  "cupy.cuda.Device",
  "cupy.cuda.runtime.setDevice",
]);
/** deviceSlots forms that only ask about a device. */
const QUERY_FORMS: ReadonlySet<string> = new Set(DEVICE_QUERY_PATHS.map((p) => `${p}()`));

/** How deep names are followed to the value they were assigned (`n = torch.cuda.device_count()`). */
const MAX_DEPTH = 2;

/** A loop's variables and the nodes it runs: a `for` statement's body, or a comprehension. */
interface DeviceLoop {
  vars: Set<string>;
  body: SyntaxNode;
  /** The loop walks Numba's device objects (`for dev in cuda.gpus`): `with dev:` makes each current. */
  objects: boolean;
}

/** The names a loop target binds (`i`, `i, dev`, `(i, dev)`). */
function targetNames(target: SyntaxNode | null, out = new Set<string>()): Set<string> {
  if (!target) return out;
  if (target.type === "identifier") out.add(target.text);
  else for (const c of target.namedChildren) if (c) targetNames(c, out);
  return out;
}

/** The values `node` (a name or `obj.attr`) is assigned in its scope: the same function (or module level) for a name, anywhere for an attribute. */
function assignedValues(model: ModuleModel, node: SyntaxNode): SyntaxNode[] {
  if (node.type !== "identifier" && node.type !== "attribute") return [];
  const scope = node.type === "identifier" ? (enclosingFunction(node)?.id ?? null) : undefined;
  const out: SyntaxNode[] = [];
  for (const a of model.nodesOfType("assignment")) {
    const left = a?.childForFieldName("left");
    const right = a?.childForFieldName("right");
    if (!a || !right || left?.text !== node.text) continue;
    if (scope !== undefined && (enclosingFunction(a)?.id ?? null) !== scope) continue;
    out.push(right);
  }
  return out;
}

/** `node` through a name or attribute assigned from a value that passes `test` (up to {@link MAX_DEPTH}). */
function holds(model: ModuleModel, node: SyntaxNode, test: (n: SyntaxNode) => boolean, depth = 0): boolean {
  if (test(node)) return true;
  if (depth >= MAX_DEPTH) return false;
  return assignedValues(model, node).some((v) => holds(model, v, test, depth + 1));
}

/** A builtin's name (`range`, `len`) where the callee is a bare name nothing imports; else the callee's dotted path. */
function callee(model: ModuleModel, call: SyntaxNode): string | null {
  const fn = call.childForFieldName("function");
  return calleePath(model, call) ?? (fn?.type === "identifier" ? fn.text : null);
}

/** Numba's device list: `cuda.gpus`, `cuda.list_devices()`. */
function isDeviceList(model: ModuleModel, n: SyntaxNode): boolean {
  if (n.type === "call") return calleePath(model, n) === NUMBA_LIST;
  return n.type === "attribute" && model.resolve(n) === NUMBA_GPUS;
}

/** The number of visible GPUs: a count call, or `len()` of Numba's device list. */
function isCount(model: ModuleModel, n: SyntaxNode): boolean {
  if (n.type !== "call") return false;
  const path = callee(model, n);
  if (path && COUNTS.has(path)) return true;
  const arg = callArgs(n).positional[0];
  return path === "len" && !!arg && holds(model, arg, (x) => isDeviceList(model, x));
}

/**
 * What a loop's iterable walks: `devices` for Numba's device objects (also through `enumerate`),
 * `ordinals` for `range(count)` / `range(0, count)` (also in `enumerate`/`list`), null otherwise.
 */
function walks(model: ModuleModel, it: SyntaxNode | null): "devices" | "ordinals" | null {
  if (!it) return null;
  if (holds(model, it, (x) => isDeviceList(model, x))) return "devices";
  if (it.type !== "call") return null;
  const path = callee(model, it);
  const args = callArgs(it).positional;
  if ((path === "enumerate" || path === "list") && args.length === 1) return walks(model, args[0]);
  if (path !== "range" || args.length === 0 || args.length > 2) return null;
  const stop = args[args.length - 1];
  return holds(model, stop, (x) => isCount(model, x)) ? "ordinals" : null;
}

/** The loops of the module over the visible GPUs ({@link walks}). */
function deviceLoops(model: ModuleModel): DeviceLoop[] {
  const out: DeviceLoop[] = [];
  for (const f of model.nodesOfType(["for_statement", "for_in_clause"])) {
    if (!f) continue;
    const kind = walks(model, f.childForFieldName("right"));
    const body = f.type === "for_statement" ? f.childForFieldName("body") : f.parent;
    if (!kind || !body) continue;
    out.push({ vars: targetNames(f.childForFieldName("left")), body, objects: kind === "devices" });
  }
  return out;
}

/** `x`, `int(x)`, `str(x)`, `x.id`: the loop variable `x` as a device, or null. */
function loopVar(n: SyntaxNode | null | undefined): string | null {
  if (!n) return null;
  if (n.type === "identifier") return n.text;
  if (n.type === "attribute" && n.childForFieldName("attribute")?.text === "id")
    return loopVar(n.childForFieldName("object"));
  if (n.type === "call" && /^(?:int|str)$/.test(n.childForFieldName("function")?.text ?? ""))
    return loopVar(callArgs(n).positional[0]);
  return null;
}

/**
 * Whether the module puts work on each visible GPU in turn: a loop over them ({@link walks}) whose
 * body makes its variable the current device or a tensor's device (a devices.ts slot other than a
 * query, a Numba or CuPy selection, `with dev:` over Numba's devices or `with cuda.gpus[i]:`).
 */
export function loopsOverDevices(model: ModuleModel): boolean {
  if (!/device_count|getDeviceCount|gpus|list_devices/.test(model.text)) return false;
  const loops = deviceLoops(model);
  if (!loops.length) return false;
  const used = (n: SyntaxNode, v: string | null) =>
    v !== null && loops.some((l) => l.vars.has(v) && contains(l.body, n));
  for (const s of deviceSlots(model)) if (!QUERY_FORMS.has(s.form) && used(s.ordinal, loopVar(s.ordinal))) return true;
  for (const call of model.nodesOfType("call")) {
    const path = call ? calleePath(model, call) : null;
    if (call && path && SELECTS.has(path) && used(call, loopVar(callArgs(call).positional[0]))) return true;
  }
  for (const item of model.nodesOfType("with_item")) {
    const v = item?.childForFieldName("value");
    if (!item || !v) continue;
    const objectLoop =
      v.type === "identifier" && loops.some((l) => l.objects && l.vars.has(v.text) && contains(l.body, item));
    const list = v.type === "subscript" ? v.childForFieldName("value") : null;
    const indexed = !!list && isDeviceList(model, list) && used(item, loopVar(v.childForFieldName("subscript")));
    if (objectLoop || indexed) return true;
  }
  return false;
}
