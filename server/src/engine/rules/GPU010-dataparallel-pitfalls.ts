import type { PythonRule, RuleContext } from "../rule";
import type { SyntaxNode } from "../python/parser";
import { stringValue } from "../python/parser";
import { envWritesAnywhere } from "../python/model";
import { nodeRange } from "../python/events";
import { cudaDeviceOrdinal, SET_DEVICE_PATHS } from "../frameworks";
import type { Fix } from "../types";
import { callArgs, calleePath, intLiteral } from "./shared/py";

const DATA_PARALLEL = new Set([
  "torch.nn.DataParallel",
  "torch.nn.parallel.DataParallel",
  "torch.nn.parallel.data_parallel.DataParallel",
]);

/** Where a module's parameters are: a CUDA ordinal, the CPU, or unknown (null). */
type Place = number | "cpu" | null;
/** A place and the expression that put the module there (for messages). */
interface Placed {
  place: Place;
  at: SyntaxNode;
}

/** GPU010: DataParallel whose first device is not the module's, or that silently takes every GPU. */
export const rule: PythonRule = {
  meta: {
    code: "GPU010",
    name: "dataparallel-pitfalls",
    severity: "error",
    fixable: true,
    fixSafety: "unsafe",
    // torch.nn(.parallel(.data_parallel)).DataParallel in the code, not DistributedDataParallel (TextProbe.codeWord).
    trigger: (t) => t.codeWord("DataParallel", true),
    docs: {
      what: "Checks `torch.nn.DataParallel`: with `device_ids=[...]`, the module must already sit on `device_ids[0]` (error when the file puts it elsewhere, e.g. `.cuda()` = cuda:0 with `device_ids=[1, 2]`); without `device_ids`, in a file that does not restrict CUDA_VISIBLE_DEVICES, it takes every visible GPU (information). Both messages point to DistributedDataParallel.",
      follows:
        "Each `DataParallel(...)` call in the file; the module it wraps back through names assigned in the file (the latest before the call) with their `.cuda()` and `.to()` moves and `device=` arguments, the literal `set_device` calls before it, a later move of the wrapper itself, and the file's CUDA_VISIBLE_DEVICES writes. Not followed: a module returned by a function (`model = build()`), held in an attribute (`self.model`) or passed in as a parameter, and CUDA_VISIBLE_DEVICES set outside the file.",
      why: "Measured on 2 x H200 with torch 2.11 (ground-truth.md, 'Distributed and DataParallel'): a module on cuda:0 wrapped in `DataParallel(m, device_ids=[1, 0])` fails at the first forward with `RuntimeError: module must have its parameters and buffers on device cuda:1 (device_ids[0])`; `DataParallel(model)` with no device_ids uses every visible device (`[0, 1]`), so on a shared machine it grabs GPUs other jobs are using. PyTorch's documentation recommends DistributedDataParallel over DataParallel even on a single machine.",
      example:
        "import torch\nimport torch.nn as nn\n\nmodel = nn.Linear(8, 8).cuda()               # cuda:0\ndp = nn.DataParallel(model, device_ids=[1, 2])  # GPU010: needs the module on cuda:1\n",
      fix: 'import torch\nimport torch.nn as nn\n\nmodel = nn.Linear(8, 8).cuda()\ndp = nn.DataParallel(model.to("cuda:1"), device_ids=[1, 2])\n',
      whenNotToCare:
        "No device_ids on a machine (or container) that only exposes the GPUs you mean to use: silence the information with `# noqa: GPU010`. Moving to DistributedDataParallel is still the recommended long-term fix.",
      references: [
        "ground-truth.md: 'Distributed and DataParallel, measured' row module on cuda:0, device_ids=[1, 0] → RuntimeError",
        "ground-truth.md: 'Other facts measured' row DataParallel(model) with no device_ids → uses every visible device",
        "PyTorch documentation, torch.nn.DataParallel: 'It is recommended to use DistributedDataParallel, instead of this class, to do multi-GPU training, even if there is only a single node'; the module must have its parameters and buffers on device_ids[0]",
      ],
    },
  },
  check(ctx) {
    const restricts = envWritesAnywhere(ctx.model).some((w) => w.variable === "CUDA_VISIBLE_DEVICES");
    for (const call of ctx.model.nodesOfType("call")) {
      if (!call || !DATA_PARALLEL.has(calleePath(ctx.model, call) ?? "")) continue;
      const { positional, keywords } = callArgs(call);
      const module = positional[0] ?? keywords.get("module");
      const idsArg = keywords.get("device_ids") ?? positional[1];
      if (!idsArg || idsArg.type === "none") {
        if (!restricts) {
          ctx.report({
            range: nodeRange(call),
            severity: "information",
            preview: true, // ecosystem check: 13 of 13 on real code were hygiene nobody would change
            message:
              "DataParallel without device_ids replicates the model on every visible GPU, and this file does not restrict CUDA_VISIBLE_DEVICES: on a shared machine it takes GPUs other jobs use. Pass device_ids (or launch with CUDA_VISIBLE_DEVICES); PyTorch recommends DistributedDataParallel instead",
          });
        }
        continue;
      }
      if (!module) continue;
      const ids = listValue(ctx, idsArg);
      const first = ids ? intLiteral(ids.namedChildren[0]) : null;
      if (first === null) continue;
      const wrapperMove = movedWrapper(ctx, call);
      const placed = wrapperMove ?? placeOf(ctx, module, call.startIndex, 0);
      const place = placed.place;
      if (typeof place !== "number" || place === first) continue;
      const where = placed.at;
      ctx.report({
        range: nodeRange(call),
        message: `DataParallel(..., device_ids=${ids!.text}) needs the module on cuda:${first} (device_ids[0]), but ${wrapperMove ? "the wrapper moves it to" : `\`${module.text}\` is on`} cuda:${place} (${ctx.where(where.startPosition.row)}): the first forward raises RuntimeError "module must have its parameters and buffers on device cuda:${first} (device_ids[0])". Consider DistributedDataParallel`,
        related: [{ range: nodeRange(where), message: `the module's parameters are put on cuda:${place} here` }],
        ...(wrapperMove ? {} : { fix: moveFix(module, first, idsArg) }),
      });
    }
  },
};

/** The list/tuple literal of `device_ids`, directly or through a module-level name. */
function listValue(ctx: RuleContext, node: SyntaxNode): SyntaxNode | null {
  if (node.type === "list" || node.type === "tuple") return node;
  if (node.type === "identifier") {
    const v = ctx.model.valueOf(node.text, node.startIndex);
    return v && (v.type === "list" || v.type === "tuple") ? v : null;
  }
  return null;
}

/** The current device for bare `"cuda"` / `.cuda()`: the last literal `set_device` before `before`, else 0 (null when a non-literal one ran). */
function currentDevice(ctx: RuleContext, before: number): Place {
  let place: Place = 0;
  for (const c of ctx.model.nodesOfType("call")) {
    if (!c || c.startIndex >= before || !SET_DEVICE_PATHS.includes(calleePath(ctx.model, c) ?? "")) continue;
    place = intLiteral(callArgs(c).positional[0]);
  }
  return place;
}

/** Where a device expression points: an ordinal, "cpu", null (unknown) or undefined (not a device, e.g. a dtype). */
function deviceOf(ctx: RuleContext, node: SyntaxNode | undefined, before: number, depth: number): Place | undefined {
  if (!node || depth > 4) return null;
  const literal = stringValue(node);
  if (literal !== null) {
    if (literal === "cpu") return "cpu";
    const n = cudaDeviceOrdinal(literal);
    return n === null ? null : n < 0 ? currentDevice(ctx, before) : n;
  }
  const int = intLiteral(node);
  if (int !== null) return int;
  if (node.type === "call" && calleePath(ctx.model, node) === "torch.device") {
    const { positional } = callArgs(node);
    if (positional.length >= 2 && stringValue(positional[0]) === "cuda") return intLiteral(positional[1]);
    return deviceOf(ctx, positional[0], before, depth + 1);
  }
  if (node.type === "identifier") {
    const v = ctx.model.valueOf(node.text, node.startIndex);
    return v ? deviceOf(ctx, v, before, depth + 1) : null;
  }
  const q = ctx.model.resolve(node);
  if (q && /^torch\.(float|half|bfloat|double|int|long|bool|uint|complex)/.test(q)) return undefined;
  return null;
}

/** Where a module expression leaves the parameters: follows `.cuda()`, `.to(...)`, `device=` and names assigned or moved before `before`. */
function placeOf(ctx: RuleContext, node: SyntaxNode, before: number, depth: number): Placed {
  const at = (place: Place): Placed => ({ place, at: node });
  if (depth > 6) return at(null);
  if (node.type === "call") {
    const fn = node.childForFieldName("function");
    const { positional, keywords } = callArgs(node);
    if (fn?.type === "attribute") {
      const method = fn.childForFieldName("attribute")?.text;
      const obj = fn.childForFieldName("object")!;
      if (method === "cuda")
        return at(positional[0] ? (deviceOf(ctx, positional[0], before, 0) ?? null) : currentDevice(ctx, before));
      if (method === "cpu") return at("cpu");
      if (method === "to") {
        const d = deviceOf(ctx, keywords.get("device") ?? positional[0], before, 0);
        return d === undefined ? placeOf(ctx, obj, before, depth + 1) : at(d);
      }
    }
    const dev = keywords.get("device");
    if (dev) return at(deviceOf(ctx, dev, before, 0) ?? null);
    return at(calleePath(ctx.model, node)?.startsWith("torch.nn.") || fn?.type === "identifier" ? "cpu" : null);
  }
  if (node.type === "identifier") {
    const assigned = ctx.model.valueOf(node.text, before);
    let place: Placed = assigned ? placeOf(ctx, assigned, assigned.startIndex, depth + 1) : at(null);
    // Later in-place moves: `model.cuda()`, `model.to(device)` as statements.
    for (const c of ctx.model.nodesOfType("call")) {
      if (
        !c ||
        c.startIndex >= before ||
        (assigned && c.startIndex < assigned.endIndex) ||
        c.parent?.type !== "expression_statement"
      )
        continue;
      const fn = c.childForFieldName("function");
      if (fn?.type !== "attribute" || fn.childForFieldName("object")?.text !== node.text) continue;
      const method = fn.childForFieldName("attribute")?.text;
      if (method === "cuda" || method === "to" || method === "cpu") place = placeOf(ctx, c, c.startIndex, depth + 1);
    }
    return place;
  }
  return at(null);
}

/** A move of the DataParallel wrapper itself (`DataParallel(...).cuda()`, or `dp.to(...)` later): the module ends up there. */
function movedWrapper(ctx: RuleContext, call: SyntaxNode): Placed | undefined {
  const parent = call.parent;
  if (
    parent?.type === "attribute" &&
    parent.childForFieldName("object")?.id === call.id &&
    parent.parent?.type === "call"
  ) {
    const method = parent.childForFieldName("attribute")?.text;
    if (method === "cuda" || method === "to") return placeOf(ctx, parent.parent, parent.parent.startIndex, 0);
  }
  const assign =
    parent?.type === "assignment" && parent.childForFieldName("right")?.id === call.id
      ? parent.childForFieldName("left")
      : null;
  if (assign?.type !== "identifier") return undefined;
  let found: Placed | undefined;
  for (const c of ctx.model.nodesOfType("call")) {
    if (!c || c.startIndex <= call.endIndex) continue;
    const fn = c.childForFieldName("function");
    if (fn?.type !== "attribute" || fn.childForFieldName("object")?.text !== assign.text) continue;
    const method = fn.childForFieldName("attribute")?.text;
    if (method === "cuda" || method === "to") found = placeOf(ctx, c, c.startIndex, 0);
  }
  return found;
}

/** `model` → `model.to("cuda:1")` (or `model.to(f"cuda:{ids[0]}")` when the ids are a name). */
function moveFix(module: SyntaxNode, first: number, idsArg: SyntaxNode): Fix {
  const target = idsArg.type === "identifier" ? `f"cuda:{${idsArg.text}[0]}"` : `"cuda:${first}"`;
  const simple = ["identifier", "attribute", "call", "subscript", "parenthesized_expression"].includes(module.type);
  const moved = `${simple ? module.text : `(${module.text})`}.to(${target})`;
  return {
    title: `Move the module to device_ids[0]: ${moved}`,
    edits: [{ range: nodeRange(module), newText: moved }],
    safe: false,
  };
}
