import type { PythonRule, RuleContext } from "../rule";
import type { SyntaxNode } from "../python/parser";
import { stringValue } from "../python/parser";
import { nodeRange } from "../python/events";
import { deviceUses } from "../python/devices";
import { timelineCall } from "../python/timeline";
import type { Fix, TextEdit } from "../types";
import { snippet } from "../rule";
import { SET_DEVICE_PATHS } from "../frameworks";
import {
  callArgs,
  calleePath,
  contains,
  enclosingFunction,
  envReadsOf,
  flowsFrom,
  inOtherBranch,
  insertAbove,
  namesFor,
  statementOf,
} from "./shared/py";

const INIT = "torch.distributed.init_process_group";

/** GPU011: distributed (DDP) device setup: set_device before NCCL init, no constant devices, LOCAL_RANK reads. */
export const rule: PythonRule = {
  meta: {
    code: "GPU011",
    name: "ddp-device-setup",
    severity: "warning",
    fixable: true,
    fixSafety: "unsafe",
    // Default: an init_process_group in the code (not only in a docstring or comment) whose backend
    // is NCCL (a string holding "nccl" in any case, or a name ending in .NCCL: `isNccl`), followed by
    // work on the current device (`.cuda()`, "cuda", or a collective that uses it:
    // `usesCurrentDevice`); preview: also constant devices and the file's LOCAL_RANK reads.
    trigger: (t, preview) =>
      (t.has("init_process_group") &&
        (preview ||
          (t.hasLower("nccl") &&
            (t.has("cuda") || t.hasAnyWord(CURRENT_DEVICE_COLLECTIVE_NAMES)) &&
            t.afterWord("init_process_group", () => true)))) ||
      (preview && t.has("LOCAL_RANK")),
    docs: {
      what: 'Checks the device setup of distributed (DDP) scripts. Default set: `init_process_group("nccl")` without `device_id=` followed, in the same function (or at module level), by CUDA work on the current device (`.cuda()`, `.to("cuda")`, `device="cuda"`, `barrier()` without `device_ids`, object collectives) before any `torch.cuda.set_device` (warning). Not reported: a `set_device(local_rank)` after the init but before such work, and a fallback `if not dist.is_initialized(): init_process_group(...)`. Preview set: the same where the init sits in a setup function of the module that never sets the device and the function that calls it then does such work, itself or in the body of a function or class constructor of the file that it calls next (`ddp_setup()` then `Trainer(model)` whose `__init__` calls `model.cuda()`) (warning), a constant device (`set_device(0)`, `"cuda:0"`, `device_ids=[0]`) in a file that calls `init_process_group` (warning), a device ordinal read from a dataclass field that only ever holds its constant default while the file writes the local rank to another attribute of the same object (`hw.gpu = local_rank`, then `set_device(self.hw.gpu_id)` with `gpu_id: int = 0`) (warning), and `os.environ["LOCAL_RANK"]` without a default (information).',
      follows:
        "Each NCCL `init_process_group(...)` of the file and the CUDA work after it in the same function (or at module level), in source order up to the first `set_device` there; for the preview check, an init in a module-level function that never calls `set_device` (nor anything else that may choose the device, as below: `current_platform.set_device(rank)`), each call of that function in the file and the CUDA work after the call in the caller's scope or, one call deep, directly in the body of a module-level function or the `__init__` of a class of the file called there, before anything in that body that may choose the device (silent where a call in between may choose the device: a function of the file that calls `set_device`, or calls up to three deep something that may, a function of the project's other modules, or a callee whose name speaks of devices, GPUs, CUDA or distributed setup); a `set_device` that runs before the init (in the module's run order with the functions it calls inlined, or earlier in the same function); the backend through names assigned in the file; for the preview checks, every constant device, the ordinals given to `set_device`, `torch.device(\"cuda\", n)` and DDP's `device_ids`/`output_device` that read a field `name: int = <n>` of a `@dataclass` of the file (only where the class is built with no arguments and never named otherwise, the field is never assigned, given as a keyword or named in a string, and a LOCAL_RANK value is assigned to another attribute of an object of the same name; one finding per field), and `os.environ[\"LOCAL_RANK\"]` of the file (not a constant device in the other branch of the `if` that creates the group: `if local_rank != -1: ... else: device = \"cuda:0\"` is the single-process path), and the project's job scripts that start it. Not followed: CUDA work inside functions called after an init in the same scope (a helper that calls `.cuda()`: on public code all such findings were single-process runs or engines that set the device themselves), `DDP(model.to(k), device_ids=[k])` with no set_device (not counted as work on the current device: ProcessGroupNCCL's collective() takes its device from the input tensors, `getDevice(inputs[0])`, and guards that device before any CUDA call, commented as keeping an extra context off device 0, pytorch/pytorch@30884b8 torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3771-3772 as cited in intel/torch-xpu-ops#3307; an extra GPU-0 context from DDP's parameter check with torch 2.1 is reported in pytorch/pytorch#114765 and was not measured here: no multi-GPU machine was lent), a setup function in another module or a method, code in other modules, and how the launcher assigns GPUs.",
      why: 'Measured (verify/GPU011-set-device-after-init, docs/ground-truth.md): `init_process_group("nccl")` without `device_id` leaves CUDA uninitialised (`torch.cuda.is_initialized()` is False after it; 1 x H200, torch 2.11, this session), and NCCL builds its communicator at the first collective, on the device current then; so `set_device(local_rank)` after the init works. CUDA work before the set_device runs on the current device, GPU 0 in every rank: on 2 x H200 with torch 2.11 the all-reduce then fails with `DistBackendError ... invalid usage` (NCCL 2.28.9; verify/GPU011). A constant `cuda:0` is only wrong when every process sees every GPU (torchrun); under launchers that give each process one GPU (Ray actors with num_gpus=1, Slurm per-task binding, one device per JAX process) it is right, which is why that check is preview. `int(os.environ["LOCAL_RANK"])` run with plain `python` raises `KeyError: \'LOCAL_RANK\'` (measured), but library and test code that only runs under a launcher is the common case (preview).',
      example:
        'import torch\nimport torch.distributed as dist\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\ndist.init_process_group("nccl")  # GPU011: every rank guesses its device\nnet = DDP(torch.nn.Linear(4, 4).cuda())\n',
      fix: 'import os\nimport torch\nimport torch.distributed as dist\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\nlocal_rank = int(os.environ["LOCAL_RANK"])\ntorch.cuda.set_device(local_rank)\ndist.init_process_group("nccl")\nnet = DDP(torch.nn.Linear(4, 4).cuda(), device_ids=[local_rank])\n',
      whenNotToCare:
        'Single-GPU debugging runs of a DDP script (world size 1), and launchers that give each process exactly one GPU (the current device is then the right one). For LOCAL_RANK: scripts that are only ever launched by torchrun, which always sets it; a file that also reads SLURM_LOCALID (srun sets that, not LOCAL_RANK) picks its launcher itself and is not reported; a file that a job script of the project starts is left to GPU036 (srun, batch step) or not reported (torchrun sets LOCAL_RANK). `int(os.environ["SLURM_LOCALID"])` is a valid local rank for set_device and device_ids.',
      references: [
        "ground-truth.md: 'Distributed and DataParallel, measured' row init_process_group(\"nccl\") with no set_device, then barrier()",
        "ground-truth.md: 'Other facts measured' row int(os.environ[\"LOCAL_RANK\"]) with plain python → KeyError",
        "PyTorch documentation, Getting Started with DistributedDataParallel / torchrun: set the device from LOCAL_RANK before creating the process group",
      ],
    },
  },
  check(ctx) {
    const calls = ctx.model.nodesOfType("call").filter((c): c is SyntaxNode => !!c);
    const inits = calls.filter((c) => calleePath(ctx.model, c) === INIT);
    const setDevices = calls.filter((c) => SET_DEVICE_PATHS.includes(calleePath(ctx.model, c) ?? ""));
    // The local-rank variable is looked for only for a fix (a finding's, below).
    let localRankKept: SyntaxNode | null | undefined;
    const localRankName = () =>
      localRankKept === undefined ? (localRankKept = localRankVariable(ctx)) : localRankKept;

    for (const init of inits) {
      const { positional, keywords } = callArgs(init);
      if (keywords.has("device_id") || !isNccl(ctx, keywords.get("backend") ?? positional[0])) continue;
      if (setDevices.some((s) => runsBefore(ctx, s, init))) continue;
      // `if not dist.is_initialized(): dist.init_process_group(...)`: a fallback for when no fixture
      // or launcher set the group (and its device) up already: common on real code, and no bug.
      if (isFallbackInit(ctx, init)) continue;
      // Measured (verify/GPU011, verify/GPU011-set-device-after-init): without device_id,
      // init_process_group("nccl") leaves CUDA uninitialised and NCCL builds its communicator at the
      // first collective, on the device current then. So set_device after the init is fine; what
      // goes wrong is CUDA work on the current device between the init and the set_device (or with
      // no set_device at all): every rank then works on GPU 0.
      const own = currentDeviceUseAfter(ctx, init, calls, setDevices);
      const viaCaller = own ? null : callerUseAfterSetup(ctx, init, calls, setDevices);
      const use = own ?? viaCaller?.use;
      if (!use) continue;
      const after = viaCaller
        ? `, after \`${snippet(viaCaller.call)}\` returns (${ctx.where(viaCaller.call.startPosition.row)}), by`
        : " by";
      const via = viaCaller?.via;
      const through = via ? `\`${snippet(via)}\` (${ctx.where(via.startPosition.row)}), which runs ` : "";
      ctx.report({
        range: nodeRange(init),
        // The setup-helper path is preview: on 1,151 public files with init_process_group (and 689
        // versions from just before a commit that added set_device) it found 2 real bugs, 1 false
        // (since silenced), too few to hold the default set's bar.
        ...(viaCaller ? { preview: true } : {}),
        message: `\`${snippet(init)}\` is followed${after} ${through}\`${snippet(use)}\` (${ctx.where(use.startPosition.row)}) with no torch.cuda.set_device(local_rank) before it: that runs on the current device, GPU 0 in every rank, so the ranks share one GPU (measured: the all-reduce fails with "invalid usage"); set the device from LOCAL_RANK first or pass device_id=`,
        related: relatedOf(viaCaller, use),
        fix: setDeviceFix(ctx, init, localRankName()),
      });
    }

    // The checks below report preview findings only, which `report` drops without preview: not
    // read then (deviceUses walks every string and call of the file).
    if (!ctx.preview) return;
    if (inits.length) {
      const local = localRankName();
      for (const use of deviceUses(ctx.model)) {
        // torch's own device forms only: a library's device_map/pipeline device was not part of the
        // ecosystem review that keeps this check in preview.
        if (use.library) continue;
        // `if local_rank != -1: ... init_process_group(...) else: device = "cuda:0"`: the constant is
        // the single-process path, which never creates the group.
        if (inits.every((i) => inOtherBranch(use.node, i))) continue;
        const call = use.node.parent?.parent?.type === "call" ? use.node.parent.parent : null;
        const isSetDevice = !!call && calleePath(ctx.model, call) === "torch.cuda.set_device";
        const node = isSetDevice ? call! : use.node;
        ctx.report({
          range: nodeRange(node),
          severity: "warning",
          // Ecosystem check: 11 of 11 on real code were right, because their launcher (Ray actors with
          // num_gpus=1, one device per JAX process, world_size=1) gives each process one GPU.
          preview: true,
          message: `\`${use.form}\` is a constant device in a distributed script (init_process_group at ${ctx.where(inits[0].startPosition.row)}): every process uses GPU ${use.ordinal}, so the ranks pile onto one GPU; derive it from LOCAL_RANK`,
          related: [{ range: nodeRange(inits[0]), message: "the process group is created here: one process per GPU" }],
          ...(local && visibleAt(local, use.node) ? { fix: rankFix(use.node, local) } : {}),
        });
      }
      for (const f of defaultAttributeDevices(ctx)) reportDefaultAttribute(ctx, f, inits[0]);
    }

    // A file that also reads SLURM_LOCALID (srun's node-local task id, srun(1); srun sets no
    // LOCAL_RANK) chooses between launchers itself: its LOCAL_RANK read is not reported.
    // A file that a job script of the project starts is judged by how it is started: GPU036 under
    // srun or as the batch step, and torchrun always sets LOCAL_RANK.
    const slurmAware = envReadsOf(ctx.model, "SLURM_LOCALID").length > 0 || (ctx.slurm?.length ?? 0) > 0;
    if (
      !slurmAware &&
      !inits.some(
        (i) =>
          !callArgs(i).keywords.has("init_method") ||
          (stringValue(callArgs(i).keywords.get("init_method")) ?? "").startsWith("env://"),
      )
    ) {
      for (const r of envReadsOf(ctx.model, "LOCAL_RANK")) {
        if (r.node.type !== "subscript") continue;
        ctx.report({
          range: nodeRange(r.node),
          severity: "information",
          // Ecosystem check: 40 of 40 on real code were library or test code that only runs under a
          // launcher (or behind a check of the variable); hygiene, in preview.
          preview: true,
          message: `${r.node.text} has no default: run with plain \`python\` it raises KeyError: 'LOCAL_RANK' (only torchrun sets it); use os.environ.get("LOCAL_RANK", "0") if the script should also run alone`,
          fix: getFix(r.node),
        });
      }
    }
  },
};

/** Collectives that run on the current device when given no device (object collectives, barrier); the prefilter's GPU011 test needs one of them or "cuda". */
export const CURRENT_DEVICE_COLLECTIVE_NAMES: readonly string[] = [
  "barrier",
  "all_gather_object",
  "broadcast_object_list",
  "gather_object",
  "scatter_object_list",
  "monitored_barrier",
];
const CURRENT_DEVICE_COLLECTIVES = new Set(CURRENT_DEVICE_COLLECTIVE_NAMES.map((n) => `torch.distributed.${n}`));

/**
 * The first CUDA work on the current device after `init` in the same scope (function, or the
 * module's top level) that no `set_device` between them re-targets: `.cuda()` with no device,
 * `.to("cuda")` / `device="cuda"` without an index, `torch.device("cuda")`, or a collective that
 * uses the current device (`barrier()` without `device_ids`, object collectives). Null when none.
 */
function currentDeviceUseAfter(
  ctx: RuleContext,
  init: SyntaxNode,
  calls: readonly SyntaxNode[],
  setDevices: readonly SyntaxNode[],
): SyntaxNode | null {
  const scope = enclosingFunction(init)?.id ?? null;
  const sameScope = (n: SyntaxNode) => (enclosingFunction(n)?.id ?? null) === scope;
  const firstSet = setDevices
    .filter((s) => s.startIndex > init.endIndex && sameScope(s))
    .sort((a, b) => a.startIndex - b.startIndex)[0];
  const limit = firstSet ? firstSet.startIndex : Infinity;
  for (const c of calls) {
    if (c.startIndex <= init.endIndex || c.startIndex >= limit || !sameScope(c)) continue;
    if (usesCurrentDevice(ctx, c)) return c;
  }
  return null;
}

/** CUDA work on the current device found inside a function or constructor of the file that a call runs. */
interface CalleeUse {
  /** The call in the scope that was followed (`Trainer(...)`, `build()`). */
  via: SyntaxNode;
  /** The work inside its body (`model.cuda()`). */
  use: SyntaxNode;
}

/**
 * Like {@link currentDeviceUseAfter}, but also looks one call deep: a call after `anchor` in the
 * same scope of a module-level function of the file, or of a class of the file (its own
 * `__init__`), whose body does CUDA work on the current device before anything in it that may
 * choose the device ({@link mayChooseDevice}). Stops at the first call in the scope that may
 * choose the device. Returns the work and the call followed (null `via` for work in the scope).
 */
function currentDeviceUseViaCallees(
  ctx: RuleContext,
  anchor: SyntaxNode,
  calls: readonly SyntaxNode[],
  setDevices: readonly SyntaxNode[],
): { use: SyntaxNode; via: SyntaxNode | null } | null {
  const scope = enclosingFunction(anchor)?.id ?? null;
  const inScope = calls.filter((c) => c.startIndex > anchor.endIndex && (enclosingFunction(c)?.id ?? null) === scope);
  // A call that may choose the device counts once it has returned: `DDP(model.cuda())` moves first.
  const choosers: SyntaxNode[] = [];
  for (const c of inScope) {
    if (choosers.some((k) => k.endIndex <= c.startIndex)) return null;
    if (usesCurrentDevice(ctx, c)) return { use: c, via: null };
    const inner = calleeUse(ctx, c, calls, setDevices);
    if (inner && inner !== "chooses") return inner;
    if (inner === "chooses" || mayChooseDevice(ctx, c, calls, setDevices)) choosers.push(c);
  }
  return null;
}

/** The body a call runs when it names a module-level function of the file, or a class of the file with its own `__init__`. */
function calleeBody(ctx: RuleContext, call: SyntaxNode): SyntaxNode | null {
  const fn = call.childForFieldName("function");
  if (fn?.type !== "identifier") return null;
  const def = ctx.model.functions.get(fn.text);
  if (def) return def;
  const cls = ctx.model.classes.get(fn.text);
  const body = cls?.childForFieldName("body");
  for (const stmt of body?.namedChildren ?? []) {
    const f = stmt?.type === "decorated_definition" ? stmt.childForFieldName("definition") : stmt;
    if (f?.type === "function_definition" && f.childForFieldName("name")?.text === "__init__") return f;
  }
  return null;
}

/** The first current-device work in the body `call` runs (see {@link currentDeviceUseViaCallees}), or null. */
function calleeUse(
  ctx: RuleContext,
  call: SyntaxNode,
  calls: readonly SyntaxNode[],
  setDevices: readonly SyntaxNode[],
): CalleeUse | "chooses" | null {
  const body = calleeBody(ctx, call);
  if (!body || contains(body, call)) return null;
  const inBody = calls.filter((d) => contains(body, d));
  const choosers = inBody.filter((d) => mayChooseDevice(ctx, d, calls, setDevices));
  // Work directly in the body (not in a function nested in it, which may never run), before any
  // call in it that may choose the device has returned.
  for (const d of inBody) {
    if (choosers.some((k) => k.endIndex <= d.startIndex)) return "chooses";
    if (enclosingFunction(d)?.id === body.id && usesCurrentDevice(ctx, d)) return { via: call, use: d };
  }
  return choosers.length ? "chooses" : null;
}

/**
 * A setup helper's caller (one level, same file): `init` is in a module-level function F that
 * never calls `set_device` (no device is chosen before F returns), and a call `F()` in the module
 * is followed, in its own scope, by CUDA work on the current device ({@link currentDeviceUseAfter},
 * anchored at the call) with no `set_device` before the call (in run order, or earlier in that
 * scope). Silent where F itself, or a call between `F()` and the work, may choose the device
 * ({@link mayChooseDevice}).
 * @returns the call of F and the work, or null.
 */
function callerUseAfterSetup(
  ctx: RuleContext,
  init: SyntaxNode,
  calls: readonly SyntaxNode[],
  setDevices: readonly SyntaxNode[],
): { call: SyntaxNode; use: SyntaxNode; via?: SyntaxNode | null } | null {
  const helper = enclosingFunction(init);
  const top = helper?.parent?.type === "decorated_definition" ? helper.parent : helper;
  const name = top?.parent?.type === "module" ? helper!.childForFieldName("name")?.text : undefined;
  if (!helper || !name || setDevices.some((s) => contains(helper, s))) return null;
  const chooses = (c: SyntaxNode): boolean => mayChooseDevice(ctx, c, calls, setDevices);
  // The helper may set the device through a wrapper torch's paths do not name: AReaL's
  // `current_platform.set_device(rank)` forwards to torch.cuda.set_device (inclusionAI/AReaL@4aef98d
  // areal/infra/platforms/platform.py:68-84), DeepSpeed's `get_accelerator().set_device(...)`.
  if (calls.some((c) => c !== init && contains(helper, c) && chooses(c))) return null;
  for (const call of calls) {
    const fn = call.childForFieldName("function");
    if (fn?.type !== "identifier" || fn.text !== name || contains(helper, call)) continue;
    if (setDevices.some((s) => runsBefore(ctx, s, call))) continue;
    const use = currentDeviceUseAfter(ctx, call, calls, setDevices);
    if (!use) {
      const followed = currentDeviceUseViaCallees(ctx, call, calls, setDevices);
      if (followed) return { call, ...followed };
      continue;
    }
    const scope = enclosingFunction(call)?.id ?? null;
    const between = calls.filter(
      (c) =>
        c.startIndex > call.endIndex && c.startIndex < use.startIndex && (enclosingFunction(c)?.id ?? null) === scope,
    );
    if (between.some(chooses)) continue;
    return { call, use };
  }
  return null;
}

/**
 * Whether a call may choose the device: a function of this file that calls `set_device` or, up to
 * three calls deep, calls something that may (a wrapper around a library's setup), a function of
 * the project's other modules (not read here), or a callee whose name speaks of devices
 * ({@link MAY_CHOOSE_DEVICE}), resolved or not; never a `.cuda()` / `.to()` / `.cpu()` move.
 */
function mayChooseDevice(
  ctx: RuleContext,
  c: SyntaxNode,
  calls: readonly SyntaxNode[],
  setDevices: readonly SyntaxNode[],
  depth = 0,
): boolean {
  const fn = c.childForFieldName("function");
  const def = fn?.type === "identifier" ? (ctx.model.functions.get(fn.text) ?? null) : null;
  if (def) {
    if (setDevices.some((s) => contains(def, s))) return true;
    return depth < 3 && calls.some((d) => contains(def, d) && mayChooseDevice(ctx, d, calls, setDevices, depth + 1));
  }
  // `.cuda()` / `.to(...)` move a tensor or module: work on a device, not a choice of the current one.
  if (fn?.type === "attribute" && MOVES.has(fn.childForFieldName("attribute")?.text ?? "")) return false;
  const path = calleePath(ctx.model, c);
  if (path && ctx.project?.isProjectFunction?.(path) === true) return true;
  return MAY_CHOOSE_DEVICE.test((path ?? fn?.text ?? "").split(".").pop()!);
}

const MOVES = new Set(["cuda", "to", "cpu"]);

/** A library function's name that may choose the device (`setup_device`, `init_distributed`, `Accelerator`): GPU011 stays silent after it. */
const MAY_CHOOSE_DEVICE = /device|gpu|cuda|distributed|accelerat|dist_init|init_dist|process_group/i;

/** Whether one call runs CUDA work on the current device (see {@link currentDeviceUseAfter}). */
function usesCurrentDevice(ctx: RuleContext, call: SyntaxNode): boolean {
  const q = calleePath(ctx.model, call);
  const { positional, keywords } = callArgs(call);
  if (q && CURRENT_DEVICE_COLLECTIVES.has(q)) return !keywords.has("device_ids") && !keywords.has("device");
  if (q === "torch.device") return stringValue(positional[0]) === "cuda" && positional.length === 1;
  const fn = call.childForFieldName("function");
  const method = fn?.type === "attribute" ? fn.childForFieldName("attribute")?.text : null;
  if (method === "cuda") return positional.length === 0 && !keywords.has("device");
  if (method === "to") return stringValue(positional[0] ?? keywords.get("device")) === "cuda";
  return stringValue(keywords.get("device")) === "cuda" && !!q?.startsWith("torch.");
}

/** Whether `init` sits under `if not <...>.is_initialized():` (a fallback when nothing set the group up). */
function isFallbackInit(ctx: RuleContext, init: SyntaxNode): boolean {
  for (let n = init.parent; n && n.type !== "function_definition" && n.type !== "module"; n = n.parent) {
    if (n.type !== "if_statement") continue;
    const cond = n.childForFieldName("condition");
    if (cond?.type !== "not_operator") continue;
    const arg = cond.childForFieldName("argument");
    if (
      arg?.type === "call" &&
      /(^|\.)is_initialized$/.test(calleePath(ctx.model, arg) ?? arg.childForFieldName("function")?.text ?? "")
    )
      return true;
  }
  return false;
}

/** Whether a backend argument selects NCCL (`"nccl"`, `"cuda:nccl,cpu:gloo"`, a name bound to it, or a conditional offering it). */
function isNccl(ctx: RuleContext, node: SyntaxNode | undefined, depth = 0): boolean {
  if (!node || depth > 3) return false;
  const v = stringValue(node);
  if (v !== null) return /(^|[,:])nccl($|,)/i.test(v);
  if (node.type === "conditional_expression")
    return node.namedChildren.some((c, i) => i !== 1 && isNccl(ctx, c ?? undefined, depth + 1));
  if (node.type === "identifier")
    return isNccl(ctx, ctx.model.valueOf(node.text, node.startIndex) ?? undefined, depth + 1);
  if (node.type === "attribute") return /\.NCCL$/.test(ctx.model.resolve(node) ?? "");
  return false;
}

/** Whether call `a` runs before call `b`: in timeline order when both are on it, else earlier in the same function. */
function runsBefore(ctx: RuleContext, a: SyntaxNode, b: SyntaxNode): boolean {
  const ta = timelineCall(ctx.model, a);
  const tb = timelineCall(ctx.model, b);
  if (ta && tb) return ctx.model.calls.indexOf(ta) < ctx.model.calls.indexOf(tb);
  return a.startIndex < b.startIndex && enclosingFunction(a)?.id === enclosingFunction(b)?.id;
}

/** A name assigned from LOCAL_RANK (`local_rank = int(os.environ["LOCAL_RANK"])`), or null. */
function localRankVariable(ctx: RuleContext): SyntaxNode | null {
  const sources = new Set(envReadsOf(ctx.model, "LOCAL_RANK").map((r) => r.node.id));
  if (!sources.size) return null;
  for (const a of ctx.model.nodesOfType("assignment")) {
    const left = a?.childForFieldName("left");
    if (left?.type === "identifier" && flowsFrom(ctx.model, a!.childForFieldName("right"), sources)) return left;
  }
  return null;
}

/** Whether a name assigned at `def` can be read at `use`: assigned earlier, at module level or in the same function. */
function visibleAt(def: SyntaxNode, use: SyntaxNode): boolean {
  const scope = enclosingFunction(def);
  return def.startIndex < use.startIndex && (!scope || scope.id === enclosingFunction(use)?.id);
}

/** Inserts `torch.cuda.set_device(...)` above the init call's statement (adding `import os` when needed). */
function setDeviceFix(ctx: RuleContext, init: SyntaxNode, localRank: SyntaxNode | null): Fix | undefined {
  const torch = namesFor(ctx.model, "torch")[0];
  if (!torch) return undefined;
  const stmt = statementOf(init);
  // In a worker started by torch.multiprocessing.spawn there is no LOCAL_RANK (only torchrun sets
  // it): the worker's first parameter is its process index, the device to use (the fix
  // inserted os.environ["LOCAL_RANK"] there, a KeyError).
  const spawnIndex = spawnedWorkerIndex(ctx, init);
  if (spawnIndex) {
    return {
      title: `Insert ${torch}.cuda.set_device(${spawnIndex}) before init_process_group`,
      edits: [insertAbove(ctx.model, stmt, `${torch}.cuda.set_device(${spawnIndex})`)],
      safe: false,
    };
  }
  const useName = !!localRank && visibleAt(localRank, init);
  const edits: TextEdit[] = [];
  let os = namesFor(ctx.model, "os")[0];
  if (!useName && !os) {
    os = "os";
    edits.push(importOsEdit(ctx));
  }
  const arg = useName ? localRank!.text : `int(${os}.environ["LOCAL_RANK"])`;
  edits.push(insertAbove(ctx.model, stmt, `${torch}.cuda.set_device(${arg})`));
  return { title: `Insert ${torch}.cuda.set_device(${arg}) before init_process_group`, edits, safe: false };
}

/** Calls that start a function in new processes with the process index as its first argument. */
const SPAWNERS = new Set([
  "torch.multiprocessing.spawn",
  "torch.multiprocessing.start_processes",
  "torch.multiprocessing.spawn.spawn",
]);

/**
 * The name of the first parameter of the function around `init` when that function is started by
 * `torch.multiprocessing.spawn(fn, ...)` (PyTorch documentation: `fn(i, *args)`, i the process
 * index), else null.
 */
function spawnedWorkerIndex(ctx: RuleContext, init: SyntaxNode): string | null {
  const fn = enclosingFunction(init);
  const name = fn?.childForFieldName("name")?.text;
  if (!fn || !name) return null;
  const started = ctx.model
    .nodesOfType("call")
    .some((c) => !!c && SPAWNERS.has(calleePath(ctx.model, c) ?? "") && callArgs(c).positional[0]?.text === name);
  if (!started) return null;
  const first = fn.childForFieldName("parameters")?.namedChildren[0];
  const param = first?.type === "identifier" ? first : (first?.childForFieldName("name") ?? null);
  return param?.type === "identifier" ? param.text : null;
}

/** `import os` as the first import of the module (after a docstring and `from __future__` imports). */
function importOsEdit(ctx: RuleContext): TextEdit {
  const eol = /\r\n/.test(ctx.model.text) ? "\r\n" : "\n";
  let line = 0;
  const top = ctx.model.tree.statements;
  for (const s of top) {
    const isDocstring =
      s.type === "expression_statement" && s.namedChildren[0]?.type === "string" && s.startIndex === top[0]?.startIndex;
    const isFuture = s.type === "future_import_statement";
    if (s.type === "comment" || isDocstring || isFuture) {
      line = s.endPosition.row + 1;
      continue;
    }
    break;
  }
  return { range: { start: { line, character: 0 }, end: { line, character: 0 } }, newText: `import os${eol}` };
}

/** `0` → `local_rank`, `"cuda:0"` → `f"cuda:{local_rank}"`. */
function rankFix(node: SyntaxNode, localRank: SyntaxNode): Fix {
  const name = localRank.text;
  const newText = node.type === "integer" ? name : `f"cuda:{${name}}"`;
  return { title: `Use ${newText}`, edits: [{ range: nodeRange(node), newText }], safe: false };
}

/** `os.environ["LOCAL_RANK"]` → `os.environ.get("LOCAL_RANK", "0")`. */
function getFix(sub: SyntaxNode): Fix | undefined {
  const env = sub.childForFieldName("value");
  const key = sub.childForFieldName("subscript");
  if (!env || !key) return undefined;
  const newText = `${env.text}.get(${key.text}, "0")`;
  return { title: `Use ${newText}`, edits: [{ range: nodeRange(sub), newText }], safe: false };
}

/** A device read from a dataclass field that only ever holds its constant default, while the local rank went to another field. */
interface DefaultAttributeDevice {
  /** `torch.cuda.set_device(self.hw.gpu_id)`, `torch.device("cuda", cfg.gpu_id)`, `device_ids=[cfg.gpu_id]`. */
  use: SyntaxNode;
  /** The attribute read (`self.hw.gpu_id`). */
  read: SyntaxNode;
  /** The field's definition in the dataclass (`gpu_id: int = 0`). */
  field: SyntaxNode;
  /** Its constant default. */
  value: string;
  /** The write of the local rank to another attribute (`hw.gpu = local_rank`). */
  rankWrite: SyntaxNode;
}

/**
 * Devices read from a field of a dataclass of the file whose only value is its constant default:
 * the field is never assigned (`.gpu_id = ...`), named in a string (`getattr`, argparse `dest`) or
 * given as a keyword, the class is only built with no arguments (`HardwareConfig()`: no parser or
 * config file fills it), and the file writes the local rank (LOCAL_RANK) to another attribute.
 */
function defaultAttributeDevices(ctx: RuleContext): DefaultAttributeDevice[] {
  const fields = constantDataclassFields(ctx);
  if (!fields.size) return [];
  const rankWrite = localRankAttributeWrite(ctx);
  if (!rankWrite) return [];
  const writtenName = rankWrite.childForFieldName("attribute")?.text;
  const out: DefaultAttributeDevice[] = [];
  for (const call of ctx.model.nodesOfType("call")) {
    if (!call) continue;
    for (const read of deviceOrdinalArgs(ctx, call)) {
      const name = read.type === "attribute" ? read.childForFieldName("attribute")?.text : undefined;
      const field = name ? fields.get(name) : undefined;
      // One finding per field: its first read (set_device, then torch.device and device_ids repeat it).
      if (!name || !field || name === writtenName || out.some((o) => o.field === field.node)) continue;
      // The same object: `hw.gpu = local_rank` and `self.hw.gpu_id` (the last name of each owner).
      if (lastName(read.childForFieldName("object")) !== lastName(rankWrite.childForFieldName("object"))) continue;
      if (!neverSet(ctx, name)) continue;
      out.push({ use: call, read, field: field.node, value: field.value, rankWrite });
    }
  }
  return out;
}

/** The ordinal arguments of `set_device(x)`, `torch.device("cuda", x)`, `DDP(..., device_ids=[x])` / `output_device=x`. */
function deviceOrdinalArgs(ctx: RuleContext, call: SyntaxNode): SyntaxNode[] {
  const path = calleePath(ctx.model, call) ?? "";
  const { positional, keywords } = callArgs(call);
  if (path === "torch.cuda.set_device") return positional.slice(0, 1);
  if (path === "torch.device") return stringValue(positional[0]) === "cuda" ? positional.slice(1, 2) : [];
  if (path !== "torch.nn.parallel.DistributedDataParallel") return [];
  const ids = keywords.get("device_ids");
  const out = ids?.type === "list" ? ids.namedChildren.filter((c): c is SyntaxNode => !!c) : [];
  const outDev = keywords.get("output_device");
  return outDev ? [...out, outDev] : out;
}

/** Fields `name: T = <integer>` of the file's `@dataclass` classes that are only built with no arguments. */
function constantDataclassFields(ctx: RuleContext): Map<string, { node: SyntaxNode; value: string }> {
  const out = new Map<string, { node: SyntaxNode; value: string }>();
  for (const [name, cls] of ctx.model.classes) {
    const decorated = cls.parent?.type === "decorated_definition" ? cls.parent : null;
    const isDataclass = decorated?.namedChildren.some((d) => d?.type === "decorator" && /\bdataclass\b/.test(d.text));
    if (!isDataclass || !builtOnlyBare(ctx, name)) continue;
    for (const stmt of cls.childForFieldName("body")?.namedChildren ?? []) {
      const a = stmt?.type === "expression_statement" ? stmt.namedChildren[0] : null;
      const left = a?.type === "assignment" ? a.childForFieldName("left") : null;
      const right = a?.childForFieldName("right");
      if (left?.type === "identifier" && right?.type === "integer" && a?.childForFieldName("type"))
        out.set(left.text, { node: a!, value: right.text });
    }
  }
  return out;
}

/** Whether every mention of class `name` in the file is its definition or a call with no arguments. */
function builtOnlyBare(ctx: RuleContext, name: string): boolean {
  let built = false;
  for (const id of ctx.model.nodesOfType("identifier")) {
    if (id?.text !== name) continue;
    const parent = id.parent;
    if (parent?.type === "class_definition" && parent.childForFieldName("name")?.id === id.id) continue;
    if (parent?.type === "call" && parent.childForFieldName("function")?.id === id.id) {
      if (parent.childForFieldName("arguments")?.namedChildren.length) return false;
      built = true;
      continue;
    }
    // A type annotation (`hw: HardwareConfig`) does not fill the object.
    if (parent?.type === "type") continue;
    return false;
  }
  return built;
}

/** Whether attribute `name` is never assigned, given as a keyword or named in a string anywhere in the file. */
function neverSet(ctx: RuleContext, name: string): boolean {
  for (const a of ctx.model.nodesOfType("attribute")) {
    if (a?.childForFieldName("attribute")?.text !== name) continue;
    let n: SyntaxNode = a;
    while (n.parent && (n.parent.type === "pattern_list" || n.parent.type === "tuple_pattern")) n = n.parent;
    const p = n.parent;
    if ((p?.type === "assignment" || p?.type === "augmented_assignment") && p.childForFieldName("left")?.id === n.id)
      return false;
  }
  for (const k of ctx.model.nodesOfType("keyword_argument"))
    if (k?.childForFieldName("name")?.text === name) return false;
  for (const str of ctx.model.nodesOfType("string"))
    if (str && new RegExp(`\\b${name}\\b`).test(str.text)) return false;
  return true;
}

/** An assignment `<obj>.<attr> = <value from LOCAL_RANK>` of the file: the attribute node, or null. */
function localRankAttributeWrite(ctx: RuleContext): SyntaxNode | null {
  const sources = new Set(envReadsOf(ctx.model, "LOCAL_RANK").map((r) => r.node.id));
  if (!sources.size) return null;
  for (const a of ctx.model.nodesOfType("assignment")) {
    const left = a?.childForFieldName("left");
    if (left?.type === "attribute" && flowsFrom(ctx.model, a!.childForFieldName("right"), sources)) return left;
  }
  return null;
}

function reportDefaultAttribute(ctx: RuleContext, f: DefaultAttributeDevice, init: SyntaxNode): void {
  ctx.report({
    range: nodeRange(f.use),
    severity: "warning",
    preview: true,
    message: `\`${snippet(f.use)}\` reads \`${f.read.text}\`, which only ever holds its default ${f.value} (${ctx.where(f.field.startPosition.row)}): the local rank is written to \`${f.rankWrite.text}\` (${ctx.where(f.rankWrite.startPosition.row)}) instead, so every process of this distributed script (init_process_group at ${ctx.where(init.startPosition.row)}) selects GPU ${f.value}`,
    related: [
      { range: nodeRange(f.field), message: "the field's only value: its default" },
      { range: nodeRange(f.rankWrite), message: "the local rank goes to this attribute" },
    ],
  });
}

/** `self.hw` → `hw`, `cfg` → `cfg`; null for anything else. */
function lastName(n: SyntaxNode | null): string | null {
  if (n?.type === "identifier") return n.text;
  if (n?.type === "attribute") return n.childForFieldName("attribute")?.text ?? null;
  return null;
}

/** The related locations of a finding: the setup helper's call, the call followed into, the work. */
function relatedOf(
  viaCaller: { call: SyntaxNode; via?: SyntaxNode | null } | null,
  use: SyntaxNode,
): { range: ReturnType<typeof nodeRange>; message: string }[] {
  return [
    ...(viaCaller
      ? [{ range: nodeRange(viaCaller.call), message: "the function that creates the process group returns here" }]
      : []),
    ...(viaCaller?.via ? [{ range: nodeRange(viaCaller.via), message: "this call runs the work below" }] : []),
    { range: nodeRange(use), message: "runs on the current device (GPU 0 in every rank)" },
  ];
}
