import type { PythonRule } from "../rule";
import { isCudaDeviceString, type ModuleModel } from "../python/model";
import type { SyntaxNode } from "../python/parser";
import { enclosingFunction, stringValue } from "../python/parser";
import { nodeRange } from "../python/events";
import { SET_DEVICE_PATHS } from "../frameworks";
import type { Fix } from "../types";
import { callArgs, calleePath, contains, namesRead, statementOf, walk } from "./shared/py";

/**
 * The loaders whose tensors go back to the device they were saved from when no `map_location` is
 * given: `torch.load(f, map_location=None, ...)` (pytorch/pytorch@000a1a54cb torch/serialization.py
 * `_get_restore_location`: `map_location is None` → `default_restore_location`, which runs
 * `_cuda_deserialize` → `validate_cuda_device` at lines 286-311) and `torch.jit.load(f,
 * map_location=None, _extra_files=None)` (torch/jit/_serialization.py `load`: "first loaded onto
 * CPU, and then are moved to the devices they were saved from").
 */
const LOADERS: ReadonlySet<string> = new Set(["torch.load", "torch.jit.load"]);

/** Methods on the loaded object (or on what holds it) that put its tensors to work on a device. */
const USES = new Set(["load_state_dict", "to", "cuda", "eval"]);

/** DataParallel / DistributedDataParallel constructors, whose `device_ids` choose the process's GPU. */
const DDP_PATHS: ReadonlySet<string> = new Set([
  "torch.nn.parallel.DistributedDataParallel",
  "torch.nn.parallel.distributed.DistributedDataParallel",
  "torch.nn.DistributedDataParallel",
]);

/** Nodes that start a new scope: bindings inside them are not the enclosing function's. */
const SCOPES = new Set(["function_definition", "class_definition", "lambda"]);

/** Each `target = value` assignment directly in `scope` (a function or the module), nested scopes skipped. */
function assignmentsIn(model: ModuleModel, scope: SyntaxNode | null): SyntaxNode[] {
  if (!scope) return model.nodesMentioning("assignment", ["cuda", "device"]).filter((a) => !insideScope(a, null));
  const out: SyntaxNode[] = [];
  const body = scope.childForFieldName("body");
  if (body)
    walk(body, (n) => {
      if (SCOPES.has(n.type)) return false;
      if (n.type === "assignment") out.push(n);
      return true;
    });
  return out;
}

/** Whether `node` lies inside a function, class or lambda below `scope` (null: the module). */
function insideScope(node: SyntaxNode, scope: SyntaxNode | null): boolean {
  for (let p = node.parent; p && p.id !== scope?.id; p = p.parent) if (SCOPES.has(p.type)) return true;
  return false;
}

/** The class whose method holds `fn` (its `self` attributes are visible there), or null. */
function classOf(fn: SyntaxNode | null): SyntaxNode | null {
  for (let p = fn?.parent ?? null; p; p = p.parent) {
    if (p.type === "class_definition") return p;
    if (p.type === "function_definition") return null;
  }
  return null;
}

/** `self.X = value` assignments anywhere in the class's methods. */
function selfAssignments(cls: SyntaxNode, attr: string): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  walk(cls, (n) => {
    if (n.type === "assignment" && n.childForFieldName("left")?.text === `self.${attr}`) out.push(n);
    return n.type !== "lambda";
  });
  return out;
}

/**
 * Whether an expression denotes a CUDA device the program chose: a `"cuda"`/`"cuda:N"` string, an
 * f-string starting with `cuda`, `torch.device(...)` of one (either branch of a conditional), or a
 * name or `self` attribute the function, its class or the module binds to one.
 */
function cudaDevice(model: ModuleModel, node: SyntaxNode | null | undefined, at: SyntaxNode, depth = 0): boolean {
  if (!node || depth > 4) return false;
  switch (node.type) {
    case "string":
      return isCudaDeviceString(node);
    case "call":
      return (
        calleePath(model, node) === "torch.device" &&
        cudaDevice(model, node.childForFieldName("arguments")?.namedChildren[0], at, depth + 1)
      );
    case "conditional_expression":
      return node.namedChildren.some((c, i) => i !== 1 && cudaDevice(model, c, at, depth + 1));
    case "parenthesized_expression":
      return cudaDevice(model, node.namedChildren[0], at, depth + 1);
    case "identifier":
    case "attribute":
      return bindingsOf(model, node.text, at).some((v) => cudaDevice(model, v, at, depth + 1));
    default:
      return false;
  }
}

/**
 * The values `name` (an identifier or `self.X`) is bound to where `at` runs: assignments in the
 * enclosing function before `at`, else at module level; `self.X` in the methods of its class.
 */
function bindingsOf(model: ModuleModel, name: string, at: SyntaxNode): SyntaxNode[] {
  const fn = enclosingFunction(at);
  const valueOf = (a: SyntaxNode) => a.childForFieldName("right");
  if (name.startsWith("self.")) {
    const cls = classOf(fn);
    const attr = name.slice(5);
    if (!cls || attr.includes(".")) return [];
    return selfAssignments(cls, attr)
      .map(valueOf)
      .filter((v): v is SyntaxNode => !!v);
  }
  if (name.includes(".")) return [];
  const named = (a: SyntaxNode) => a.childForFieldName("left")?.text === name;
  const local = fn ? assignmentsIn(model, fn).filter(named) : [];
  const before = local.filter((a) => a.startIndex < at.startIndex);
  const chosen = local.length ? before.slice(-1) : assignmentsIn(model, null).filter(named).slice(-1);
  return chosen.map(valueOf).filter((v): v is SyntaxNode => !!v);
}

/** A name in scope at `at` holding the program's CUDA device, for `map_location=`: local first, then `self.X`, then module level. */
function deviceName(model: ModuleModel, at: SyntaxNode): string | null {
  const fn = enclosingFunction(at);
  const isDevice = (a: SyntaxNode) => {
    const left = a.childForFieldName("left");
    return (
      !!left &&
      (left.type === "identifier" || /^self\.\w+$/.test(left.text)) &&
      cudaDevice(model, a.childForFieldName("right"), at)
    );
  };
  const candidates = [
    ...(fn ? assignmentsIn(model, fn).filter((a) => a.startIndex < at.startIndex) : []).reverse(),
    ...(classOf(fn) ? assignmentsInClass(classOf(fn)!) : []),
    ...assignmentsIn(model, null).reverse(),
  ];
  for (const a of candidates) {
    if (!isDevice(a)) continue;
    // A name the `if __name__ == "__main__":` block binds does not exist when the module is imported.
    if (fn && !contains(fn, a) && inMainGuard(a)) continue;
    const name = a.childForFieldName("left")!.text;
    // A module-level name that the function also binds is the function's own there.
    if (fn && !name.startsWith("self.") && a.startIndex < fn.startIndex && localBinds(model, fn, name)) continue;
    return name;
  }
  return null;
}

/** Whether `node` lies in an `if __name__ == "__main__":` block. */
function inMainGuard(node: SyntaxNode): boolean {
  for (let p = node.parent; p; p = p.parent) {
    if (p.type !== "if_statement") continue;
    const test = p.childForFieldName("condition");
    if (test?.type !== "comparison_operator") continue;
    const [a, b] = test.namedChildren;
    const sides = [
      a?.type === "identifier" ? a.text : stringValue(a),
      b?.type === "identifier" ? b.text : stringValue(b),
    ];
    if (sides.includes("__name__") && sides.includes("__main__")) return true;
  }
  return false;
}

/** The `self.X = ...` assignments in a class's methods. */
function assignmentsInClass(cls: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  walk(cls, (n) => {
    if (n.type === "assignment" && /^self\.\w+$/.test(n.childForFieldName("left")?.text ?? "")) out.push(n);
    return n.type !== "lambda";
  });
  return out;
}

function localBinds(model: ModuleModel, fn: SyntaxNode, name: string): boolean {
  return assignmentsIn(model, fn).some((a) => a.childForFieldName("left")?.text === name);
}

/**
 * Where the load's function (or the module, for a load at top level) chooses the process's GPU
 * without a device name to map to: `torch.cuda.set_device(...)` or DistributedDataParallel's
 * `device_ids=`. The form, for the message, or null.
 */
function processDevice(model: ModuleModel, at: SyntaxNode): string | null {
  const fn = enclosingFunction(at);
  for (const call of model.nodesMentioning("call", ["set_device", "device_ids"])) {
    if (fn ? !contains(fn, call) || insideScope(call, fn) : insideScope(call, null)) continue;
    // Only a choice that runs whenever the load runs: its block holds the load.
    const block = statementOf(call).parent;
    if (!block || !contains(block, at)) continue;
    const path = calleePath(model, call);
    if (path && SET_DEVICE_PATHS.includes(path)) return `${path}(${callArgs(call).positional[0]?.text ?? ""})`;
    if (path && DDP_PATHS.has(path) && callArgs(call).keywords.has("device_ids"))
      return `DistributedDataParallel(device_ids=${callArgs(call).keywords.get("device_ids")!.text})`;
  }
  return null;
}

/**
 * Whether the loaded object is put to work on a device: handed (whole or a part of it) to
 * `load_state_dict`, or moved with `.to(...)`/`.cuda(...)`/`.eval()` (a whole model), directly or
 * through the name the load is assigned to, later in the same function.
 */
function feedsModel(model: ModuleModel, load: SyntaxNode): boolean {
  let e = load;
  for (;;) {
    const p = e.parent;
    if (!p) return false;
    if (p.type === "subscript" && p.childForFieldName("value")?.id === e.id) e = p;
    else if (p.type === "parenthesized_expression") e = p;
    else if (p.type === "attribute" && p.childForFieldName("object")?.id === e.id) {
      const method = p.childForFieldName("attribute")?.text ?? "";
      if (USES.has(method) && p.parent?.type === "call") return true;
      if (method !== "get" || p.parent?.type !== "call") return false;
      e = p.parent;
    } else break;
  }
  const holder = e.parent;
  if (holder?.type === "argument_list") return isUse(holder.parent, "load_state_dict");
  if (holder?.type !== "assignment" || holder.childForFieldName("right")?.id !== e.id) return false;
  const target = holder.childForFieldName("left");
  if (!target || (target.type !== "identifier" && !/^self\.\w+$/.test(target.text))) return false;
  return usedLater(model, holder, target.text);
}

/** Whether `call` is a `X.<method>(...)` call. */
function isUse(call: SyntaxNode | null, method: string): boolean {
  const fn = call?.type === "call" ? call.childForFieldName("function") : null;
  return fn?.type === "attribute" && fn.childForFieldName("attribute")?.text === method;
}

/** After `stmt`, in its function (or module), `name` feeds `load_state_dict(...)` or is moved to a device. */
function usedLater(model: ModuleModel, stmt: SyntaxNode, name: string): boolean {
  const fn = enclosingFunction(stmt);
  const root = fn?.childForFieldName("body") ?? null;
  const calls = root ? descendantsOf(root, "call") : model.nodesMentioning("call", [name.split(".").pop()!]);
  return calls.some((c) => {
    if (c.startIndex < stmt.endIndex || (root ? insideScope(c, fn) : insideScope(c, null))) return false;
    const callee = c.childForFieldName("function");
    if (callee?.type !== "attribute") return false;
    const method = callee.childForFieldName("attribute")?.text ?? "";
    const object = callee.childForFieldName("object")?.text;
    if (object === name && USES.has(method) && method !== "load_state_dict") return true;
    if (method !== "load_state_dict") return false;
    const args = c.childForFieldName("arguments");
    if (!args) return false;
    if (!name.includes(".")) return namesRead(args).has(name);
    return args.text.includes(name);
  });
}

function descendantsOf(root: SyntaxNode, type: string): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  walk(root, (n) => {
    if (n.type === type) out.push(n);
    return true;
  });
  return out;
}

/**
 * Whether the file writes the file the load reads: `torch.save(obj, P)` anywhere in it with the
 * same path expression `P` as the load's (`torch.save(net.state_dict(), "teacher.pth")` then
 * `torch.load("teacher.pth")`). Its tensors then come from this program's own device choice.
 * `before`: only a save earlier in the load's own function (or the module) counts.
 */
function savedHere(model: ModuleModel, load: SyntaxNode, before: boolean): boolean {
  const { positional, keywords } = callArgs(load);
  const path = (positional[0] ?? keywords.get("f"))?.text;
  if (!path) return false;
  const fn = enclosingFunction(load);
  return model.nodesMentioning("call", ["save"]).some((c) => {
    if (before && (c.startIndex >= load.startIndex || enclosingFunction(c)?.id !== fn?.id)) return false;
    if (calleePath(model, c) !== "torch.save") return false;
    const args = callArgs(c);
    return (args.positional[1] ?? args.keywords.get("f"))?.text === path;
  });
}

/** `, map_location=<name>` after the call's last argument. */
function addMapLocation(call: SyntaxNode, name: string): Fix | undefined {
  const args = call.childForFieldName("arguments");
  const last = args?.namedChildren.filter((a): a is SyntaxNode => !!a && a.type !== "comment").pop();
  if (!last) return undefined;
  const end = nodeRange(last).end;
  return {
    title: `Pass map_location=${name}`,
    safe: false,
    edits: [{ range: { start: end, end }, newText: `, map_location=${name}` }],
  };
}

/** The loads a rule may report: torch.load / torch.jit.load with no map_location (keyword or second positional) and no `*args`/`**kwargs`. */
function loadsWithoutMapLocation(model: ModuleModel): SyntaxNode[] {
  return model.nodesMentioning("call", ["load"]).filter((call) => {
    const path = calleePath(model, call);
    if (!path || !LOADERS.has(path)) return false;
    const args = call.childForFieldName("arguments")?.namedChildren ?? [];
    if (args.some((a) => a?.type === "list_splat" || a?.type === "dictionary_splat")) return false;
    const { positional, keywords } = callArgs(call);
    return !keywords.has("map_location") && positional.length < 2 && (positional.length === 1 || keywords.has("f"));
  });
}

const WHY =
  'on a machine with fewer GPUs the load stops with "Attempting to deserialize object on CUDA device N but torch.cuda.device_count() is M", and otherwise they take memory on that GPU (torch.load documentation)';

/** GPU073: torch.load / torch.jit.load of a model's weights without map_location in a program that chose its GPU. */
export const rule: PythonRule = {
  meta: {
    code: "GPU073",
    name: "load-without-map-location",
    severity: "information",
    fixable: true,
    fixSafety: "unsafe",
    preview: true,
    // A torch.load / torch.jit.load call names `load`; the device it is compared with is a CUDA
    // string or torch.cuda.set_device (both hold `cuda`) or DistributedDataParallel's `device_ids`.
    trigger: (t) => t.has("load") && (t.has("cuda") || t.has("device_ids")),
    docs: {
      what: 'Finds `torch.load(...)` and `torch.jit.load(...)` calls without `map_location` (as a keyword or the second positional argument) whose result goes into a model (`load_state_dict(...)`, directly, through a part of it such as `ckpt["model"]`, or through the name it is assigned to) or is moved with `.to(...)`, `.cuda(...)` or `.eval()`, in a program that chose its own GPU: a name bound to a CUDA device (`torch.device(f"cuda:{args.gpu_idx}" if ... else "cpu")`, `"cuda:1"`, `self.device = ...`) in scope at the load, or, in the load\'s function, `torch.cuda.set_device(...)` or DistributedDataParallel\'s `device_ids=`.',
      follows:
        "The load's own function (or the module, for a load at top level): names bound there before the load, then `self` attributes the class's methods bind, then module-level names; the use of the load's result later in the same function. Silent where the file itself writes the file it loads (`torch.save(..., P)` with the same path expression `P`: its tensors come from this program's own device), unless the process chose its GPU with `set_device` or `device_ids` (rank 0's save then brings every rank to rank 0's GPU), and for a load in a function where the only device name is bound in the `if __name__ == \"__main__\":` block (absent when the module is imported). Not followed: loads whose result is returned or used only on the CPU (nothing moves it to a device), devices chosen in another function or module or taken from a value the file does not spell out (`torch.device(args.device)`), wrappers that call torch.load for you (Lightning's `load_from_checkpoint`, `torch.hub.load_state_dict_from_url`), and calls that pass `*args`/`**kwargs`. `weights_only=` changes what may be unpickled, not where tensors go, so it does not silence the check.",
      why: 'torch.load deserialises each storage on the CPU and then moves it to the device it was saved from unless `map_location` says otherwise (torch.load documentation; torch/serialization.py: with `map_location=None` the restore location is `default_restore_location`, whose CUDA branch `_cuda_deserialize` calls `validate_cuda_device`, which raises `Attempting to deserialize object on CUDA device 2 but torch.cuda.device_count() is 1` when the saved index is not on this machine; measured with torch 2.11 on one H100, verify/results-restore-shared-h100.json: a checkpoint tagged cuda:1 raises it with `weights_only=True` or `False` and after `torch.cuda.set_device(0)`, and `map_location="cpu"`, `"cuda:0"` or a `torch.device` loads it). A checkpoint written on the author\'s `cuda:2` then fails on a one-GPU machine (maudzung/Complex-YOLOv4-Pytorch#43), and one written on `cuda:0` puts every process\'s copy on GPU 0 whatever device the script chose: the PyTorch DDP tutorial asks for `map_location` "to prevent a process from stepping into others\' devices". torch.jit.load behaves the same ("first loaded onto CPU, and then are moved to the devices they were saved from"). The checkpoint\'s device is in the file, not in the program, so this is information, and in preview.',
      example:
        'import torch\n\ndevice = torch.device("cuda:1")\nmodel = torch.nn.Linear(4, 4)\nmodel.load_state_dict(torch.load("weights.pt"))  # GPU073\nmodel.to(device)\n',
      fix: 'import torch\n\ndevice = torch.device("cuda:1")\nmodel = torch.nn.Linear(4, 4)\nmodel.load_state_dict(torch.load("weights.pt", map_location=device))\nmodel.to(device)\n',
      whenNotToCare:
        'When every checkpoint the program loads was saved from the CPU (`torch.save(model.cpu().state_dict(), ...)`), or on machines with one GPU and checkpoints saved from `cuda:0`. The quick fix (unsafe: the tensors then land on the program\'s device at load time, which changes where the memory goes) adds `map_location=<the device name>` where a name holding the device is in scope; where only `set_device` or `device_ids` chose the GPU, pass that device yourself, or `map_location="cpu"` before `load_state_dict`.',
      references: [
        "Measured: verify/results-restore-shared-h100.json (verify/frameworks/restore_and_shared_gpu_probe.py; 1 x H100, torch 2.11.0+cu130): a state dict whose storages are tagged cuda:1 fails to load with 'Attempting to deserialize object on CUDA device 1 but torch.cuda.device_count() is 1', with weights_only=True, weights_only=False and after torch.cuda.set_device(0); map_location='cpu', 'cuda:0' and torch.device('cuda', 0) load it",
        'PyTorch documentation, torch.load: storages "are first deserialized on the CPU and are then moved to the device they were saved from. If this fails (e.g. because the run time system doesn\'t have certain devices), an exception is raised"',
        "pytorch/pytorch@000a1a54cb torch/serialization.py:286-301 `validate_cuda_device` (the RuntimeError 'Attempting to deserialize object on CUDA device {device} but torch.cuda.device_count() is {device_count}. Please use torch.load with map_location to map your storages to an existing device.'), :304-311 `_cuda_deserialize`, :413 `register_package(20, _cuda_tag, _cuda_deserialize)`, :429 `default_restore_location`; `_get_restore_location`: `map_location is None` → `default_restore_location`. The same code in Debian's python3-torch 1.13.1+dfsg-4: torch/serialization.py:162-177 `validate_cuda_device`, :180-187 `_cuda_deserialize`, :1043-1045 `_get_restore_location`, :670-673 the docstring of `load`",
        'pytorch/tutorials@0168169603 intermediate_source/ddp_tutorial.rst, Save and Load Checkpoints: "If map_location is missing, torch.load will first load the module to CPU and then copy each parameter to where it was saved, which would result in all processes on the same machine using the same set of devices"',
        'PyTorch documentation, torch.jit.load, and python3-torch 1.13.1 torch/jit/_serialization.py:87-94 `load(f, map_location=None, _extra_files=None)`: "All previously saved modules, no matter their device, are first loaded onto CPU, and then are moved to the devices they were saved from"',
        "maudzung/Complex-YOLOv4-Pytorch#43 (2022-05): pretrained weights saved on cuda:2 failed to load on one GPU; the fix passes map_location",
      ],
    },
  },
  check(ctx) {
    for (const call of loadsWithoutMapLocation(ctx.model)) {
      if (!feedsModel(ctx.model, call) || savedHere(ctx.model, call, true)) continue;
      // A file the program itself wrote from its one device comes back there; where each process
      // chose its GPU (set_device, device_ids), rank 0's save still brings every rank to rank 0's GPU.
      const name = savedHere(ctx.model, call, false) ? null : deviceName(ctx.model, call);
      const form = name ? null : processDevice(ctx.model, call);
      if (!name && !form) continue;
      const loader = calleePath(ctx.model, call) === "torch.jit.load" ? "torch.jit.load" : "torch.load";
      ctx.report({
        range: nodeRange(call),
        message: name
          ? `${loader}(...) has no map_location, so CUDA tensors in the checkpoint return to the GPU index they were saved from, not to this program's device \`${name}\`: ${WHY}; pass map_location=${name}`
          : `${loader}(...) has no map_location, so CUDA tensors in the checkpoint return to the GPU index they were saved from, not to the GPU this process chose with ${form}: ${WHY}; pass map_location set to that device (or "cpu" before load_state_dict)`,
        fix: name ? addMapLocation(call, name) : undefined,
      });
    }
  },
};
