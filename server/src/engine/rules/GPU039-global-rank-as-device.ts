import { scriptNameOf } from "../slurmLaunch";
import type { PythonRule, RuleContext } from "../rule";
import type { SyntaxNode } from "../python/parser";
import { enclosingFunction, stringValue } from "../python/parser";
import { nodeRange } from "../python/events";
import { RankFlow, RANK_VARIABLES, type RankLibrary, type RankOrigin } from "../python/rankFlow";
import { deviceSlots, deviceParams, namesBoundIn, type DeviceSlot } from "../python/devices";
import { callArgs, calleePath } from "./shared/py";
import { CLASS_SCOPE, closureOf, MAIN_SCOPE, MODULE_SCOPE, moduleCalls, scopeOf } from "../python/argparseReach";

const TORCHRUN = "https://pytorch.org/docs/stable/elastic/run.html";
const TUTORIAL = "https://pytorch.org/tutorials/intermediate/ddp_tutorial.html";

/** What to use instead of the global rank, by where it was read (`library`: RankFlow.libraryOf the source). */
function localInstead(origin: RankOrigin, library: RankLibrary | null): string {
  const obj = origin.source?.childForFieldName("object")?.text;
  // vLLM's worker makes cuda:{local_rank} current before it builds the model runner and the KV
  // connector (vllm/v1/worker/gpu_worker.py Worker.init_device); TensorRT-LLM's Mapping.local_rank is
  // rank % gpus_per_node (tensorrt_llm/mapping.py).
  if (library === "vllm")
    return "torch.cuda.current_device() (the vLLM worker has already made its GPU on this node the current device)";
  if (library === "other") return "the process's index on its node, or torch.cuda.current_device()";
  if (library === "tensorrt_llm" && obj)
    return `${obj}.local_rank (rank % gpus_per_node), or torch.cuda.current_device()`;
  switch (origin.variable) {
    case "SLURM_PROCID":
      return 'int(os.environ["SLURM_LOCALID"]) (srun sets it)';
    case "OMPI_COMM_WORLD_RANK":
      return 'int(os.environ["OMPI_COMM_WORLD_LOCAL_RANK"]) (mpirun sets it)';
    default:
      break;
  }
  if (origin.source?.type === "attribute")
    return `${origin.source.childForFieldName("object")?.text ?? "accelerator"}.local_process_index`;
  return 'int(os.environ["LOCAL_RANK"]) (torchrun sets it), or rank % torch.cuda.device_count()';
}

/**
 * The fix where the program keeps its local rank in a name: `local_rank = int(os.environ["LOCAL_RANK"])`
 * (the read, bare or in `int()`, as the whole right side) in the same function as the device slot and
 * above it; the device argument becomes that name.
 */
function localNameFix(slot: DeviceSlot, read: LocalRead | null) {
  const local = read?.node ?? null;
  let value: SyntaxNode | null = local;
  if (
    value?.parent?.type === "argument_list" &&
    value.parent.parent?.type === "call" &&
    value.parent.parent.childForFieldName("function")?.text === "int"
  )
    value = value.parent.parent;
  const assign = value?.parent;
  const name =
    assign?.type === "assignment" && assign.childForFieldName("right")?.id === value?.id
      ? assign.childForFieldName("left")
      : null;
  if (!local || !assign || name?.type !== "identifier") return undefined;
  // In the slot's function, or at module level (a global the function reads, unless it binds the name itself).
  const home = enclosingFunction(assign);
  const fn = enclosingFunction(slot.ordinal);
  if (home ? home.id !== fn?.id : fn && namesBoundIn(fn).has(name.text)) return undefined;
  if (assign.endIndex > slot.ordinal.startIndex && home) return undefined;
  return {
    title: `Use ${name.text} as the device`,
    edits: [{ range: nodeRange(slot.ordinal), newText: name.text }],
    safe: false,
  };
}

/** The fix: the device argument becomes the LOCAL_RANK read, written as the file reads RANK (`os.environ[...]`, `.get(..., d)`, `os.getenv(...)`). */
function localRankFix(ctx: RuleContext, slot: DeviceSlot, origin: RankOrigin) {
  if (origin.variable !== "RANK" || !origin.plain || !origin.source) return undefined;
  const src = origin.source;
  const key =
    src.type === "subscript"
      ? src.childForFieldName("subscript")
      : src.childForFieldName("arguments")?.namedChildren[0];
  if (!key || key.type !== "string" || stringValue(key) !== "RANK") return undefined;
  const quote = key.text.endsWith("'") ? "'" : '"';
  const read =
    ctx.model.text.slice(src.startIndex, key.startIndex) +
    `${quote}LOCAL_RANK${quote}` +
    ctx.model.text.slice(key.endIndex, src.endIndex);
  const newText = `int(${read})`;
  if (newText.includes("\n")) return undefined;
  // Inside an f-string the read must not use the string's own quote (before Python 3.12).
  for (let p = slot.ordinal.parent; p; p = p.parent) {
    if (p.type === "string") {
      const q = p.namedChildren[0]?.text.replace(/^[A-Za-z]+/, "") ?? '"';
      if (newText.includes(q[0])) return undefined;
      break;
    }
  }
  return { title: `Use ${newText} as the device`, edits: [{ range: nodeRange(slot.ordinal), newText }], safe: false };
}

/**
 * The module's first read of a local rank, or null: an environment read of LOCAL_RANK, SLURM_LOCALID
 * or OMPI_COMM_WORLD_LOCAL_RANK (python/rankFlow.ts RANK_VARIABLES), a call of
 * `torch.distributed.get_node_local_rank()`, or an Accelerate `.local_process_index`. A program that
 * reads its local rank is written for launchers that start it on several nodes, and has the right
 * device number at hand: the global rank used as a device there is a mix-up, not a one-node shortcut.
 */
function localRankRead(ctx: RuleContext, flow: RankFlow): LocalRead | null {
  let first: LocalRead | null = null;
  const take = (n: SyntaxNode, returned = false) => {
    if (!first || n.startIndex < first.node.startIndex) first = { node: n, returned };
  };
  for (const e of ctx.model.events) if (e.kind === "envRead" && RANK_VARIABLES[e.variable] === "local") take(e.node);
  for (const call of ctx.model.nodesOfType("call")) {
    const path = call ? calleePath(ctx.model, call) : null;
    if (call && path?.endsWith(".get_node_local_rank") && path.startsWith("torch.distributed")) take(call);
    // A function (of this module or another project module) whose returned tuple holds a local rank.
    if (call && path && returnsLocalRank(ctx, flow, call, path)) take(call, true);
  }
  // Only the statements that name it (an attribute's name is a whole word of the text): not every
  // attribute of the file (python3-torch's distributed_test.py has about 5,000).
  for (const a of ctx.model.nodesMentioning("attribute", ["local_process_index"], true))
    if (a.childForFieldName("attribute")?.text === "local_process_index") take(a);
  // A copy of the environment read by key: `env = {k: os.environ[k] for k in (..., "LOCAL_RANK")}`, then `env[\"LOCAL_RANK\"]`.
  for (const n of ctx.model.nodesMentioning("subscript", LOCAL_VARIABLES, true))
    if (n.childForFieldName("value")?.type === "identifier" && flow.origin(n).kind === "local") take(n);
  return first;
}

/** The environment variables that hold a local rank (python/rankFlow.ts RANK_VARIABLES). */
const LOCAL_VARIABLES = Object.keys(RANK_VARIABLES).filter((v) => RANK_VARIABLES[v] === "local");

/** A local-rank read of the file: the read itself, or a call whose returned tuple holds one (`returned`). */
interface LocalRead {
  node: SyntaxNode;
  returned: boolean;
}

/** Whether `call` (resolved to `path`) is a function of this module or of the project that returns a tuple holding a local rank. */
function returnsLocalRank(ctx: RuleContext, flow: RankFlow, call: SyntaxNode, path: string): boolean {
  const fn = call.childForFieldName("function");
  const def = fn?.type === "identifier" ? ctx.model.functions.get(fn.text) : undefined;
  if (def) return !!flow.returnedTuple(def)?.some((o) => o.kind === "local");
  return !!ctx.project?.callableReturns?.(path)?.some((r) => r.kind === "local");
}

/** How the message names the file's local-rank read: the read itself, or the call whose returned tuple holds it. */
function localShown(ctx: RuleContext, local: LocalRead): string {
  const text = local.node.text.length > 60 ? `${local.node.text.slice(0, 57)}...` : local.node.text;
  const at = ctx.where(local.node.startPosition.row);
  return local.returned
    ? `the one ${text} also returns (${at}; check the order the values are unpacked in)`
    : `${text}, which this file reads on ${at}`;
}

/**
 * The arguments of calls that end up as a device ordinal in the callee: a module-level function of
 * this file, a class of this file (its `__init__`'s parameters after `self`), or a function of another project module (ProjectLookup.callableDeviceParams), whose
 * parameter reaches a device slot as it is (python/devices.ts `deviceParams`); asked only for calls
 * that pass a global rank. The slot's form says
 * where: `passed as local_rank to f(), which uses it in dist.barrier(device_ids=[…]) (torch_utils.py:11)`.
 */
function argumentSlots(ctx: RuleContext, slots: readonly DeviceSlot[], flow: RankFlow): DeviceSlot[] {
  const out: DeviceSlot[] = [];
  const ownParams = new Map<number, ReturnType<typeof deviceParams>>();
  for (const call of ctx.model.nodesOfType("call")) {
    const fn = call?.childForFieldName("function");
    if (!call || !fn) continue;
    // A function of this file whose parameters reach a device slot, else a dotted path that may name
    // another project module's function; the rest (methods, builtins) are skipped before any flow.
    // A class of this file: its constructor's parameters, after `self` (`Generator(args, tp_rank=rank)`).
    const own = fn.type === "identifier" && !ctx.model.symbols.has(fn.text);
    const cls = own && !ctx.model.functions.has(fn.text) ? ctx.model.classes.get(fn.text) : undefined;
    const def = own ? (ctx.model.functions.get(fn.text) ?? (cls ? constructorOf(cls) : undefined)) : undefined;
    const shift = cls && def ? 1 : 0;
    let local = def ? ownParams.get(def.id) : undefined;
    if (def && !local)
      ownParams.set(
        def.id,
        (local = deviceParams(def, slots)
          .filter((d) => d.index >= shift)
          .map((d) => ({ ...d, index: d.index - shift }))),
      );
    const path =
      !def && ctx.project?.callableDeviceParams && (fn.type === "identifier" || fn.type === "attribute")
        ? calleePath(ctx.model, call)
        : null;
    if (def ? !local?.length : !path?.includes(".") || ctx.project?.isProjectFunction?.(path) === false) continue;
    // Only calls that pass a global rank at all: another module's callee is looked at only then.
    const { positional, keywords } = callArgs(call);
    if (![...positional, ...keywords.values()].some((a) => flow.origin(a).kind === "global")) continue;
    const params: ReadonlyArray<{ index: number; name: string; form: string; where: string }> | null | undefined = def
      ? local!.map((d) => ({ ...d, where: ctx.where(d.line - 1) }))
      : ctx.project!.callableDeviceParams!(path!);
    if (!params?.length) continue;
    const name = fn.text.length > 40 ? `${fn.text.slice(0, 37)}...` : fn.text;
    for (const p of params) {
      const arg = keywords.get(p.name) ?? positional[p.index];
      if (arg && arg.type !== "list_splat" && arg.type !== "dictionary_splat")
        out.push({ ordinal: arg, form: `passed as ${p.name} to ${name}(), which uses it in ${p.form} (${p.where})` });
    }
  }
  return out;
}

/** The `__init__` defined in the body of class `cls` (a decorated one too), or undefined. */
function constructorOf(cls: SyntaxNode): SyntaxNode | undefined {
  for (const m of cls.childForFieldName("body")?.namedChildren ?? []) {
    const def = m?.type === "decorated_definition" ? m.childForFieldName("definition") : m;
    if (def?.type === "function_definition" && def.childForFieldName("name")?.text === "__init__") return def;
  }
  return undefined;
}

/**
 * Why a finding without a local-rank read is in the default set, or null (preview):
 * - `several`: a job or shell script of the project starts the file on several nodes (slurmLaunch.ts
 *   `launchNodesIn`: `--nnodes=2`, `#SBATCH --nodes=2`), where the global rank passes the node's GPUs;
 * - `library`: the rank is vLLM's `ParallelConfig.rank` (RankFlow.libraryOf), outside a test module:
 *   code in a vLLM worker or plugin runs where vLLM places its workers, on several nodes too;
 * - `init`: the device is chosen in the function (or module level) that calls
 *   `torch.distributed.init_process_group`: the program's own distributed setup, which every launch
 *   of it runs, on one node or several; not in a test module (pytest's names, a `tests` folder), and
 *   not where every launch the project's scripts and Markdown documents write down says one node
 *   (`--standalone`, `--nnodes=1`; slurmLaunch.ts `documentedLaunchNodes`).
 */
function gate(
  ctx: RuleContext,
  slot: DeviceSlot,
  inits: readonly SyntaxNode[],
  library: RankLibrary | null,
): { kind: "several" | "init" | "library"; text: string } | null {
  const launches = ctx.launchNodes ?? [];
  const several = launches.find((l) => l.nodes === "several");
  if (several) {
    return {
      kind: "several",
      text: `${scriptNameOf(several)}:${several.line + 1} starts this file on several nodes (${several.from})`,
    };
  }
  if (ctx.testModule) return null;
  // vLLM's own global rank: the code runs in a vLLM worker, placed by whoever deploys vLLM, on one
  // node or several (ParallelConfig.nnodes, node_rank); vLLM gives the worker's device as local_rank.
  if (library === "vllm")
    return {
      kind: "library",
      text: "vLLM documents ParallelConfig.rank as the global rank of a deployment that may span nodes; its workers' GPU is their local_rank",
    };
  const importer = importedOnSeveralNodes(ctx, slot.ordinal);
  if (importer) return { kind: "several", text: importer };
  const fn = enclosingFunction(slot.ordinal);
  const init = inits.find((c) => enclosingFunction(c)?.id === fn?.id);
  if (!init) return null;
  // The documents are read only now: a candidate is rare, and lexing them is not free.
  const all = [...launches, ...(ctx.project?.documentedLaunches?.() ?? [])];
  if (all.length > 0 && all.every((l) => l.nodes === "one")) return null;
  // A module no launch names (a setup helper): the launches of the files that run its code.
  if (all.length === 0 && usedOnOneNodeOnly(ctx, slot.ordinal)) return null;
  const called = calleePath(ctx.model, init)!.replace(/^.*\./, "");
  return { kind: "init", text: `${called} is called beside it (${ctx.where(init.startPosition.row)})` };
}

/** {@link importedOnSeveralNodes}'s answers per lint, by the slot's scope (asked once per candidate slot). */
const importerKept = new WeakMap<RuleContext, Map<string, string | null>>();

/**
 * Where another project file that a job or shell script starts on several nodes runs the code of
 * this module that holds `at` (python/project.ts `reach` from the launched file: its imports, and
 * the calls into the project's modules it leads to), for the message: `train.py, which launch.sh:3
 * starts on several nodes (--nnodes=2), uses this module (train.py:6)`; null when none does, or
 * without a project index. Code in a module-level function counts as run where a call reaches that
 * function, or a function of this module that calls it (directly or through others), or where an
 * import runs module-level code that calls it; module-level code and methods (which the reach does
 * not follow) where the module is imported or called into; the `__main__` block never (it runs only
 * when this file is the program).
 */
function importedOnSeveralNodes(ctx: RuleContext, at: SyntaxNode): string | null {
  const scope = scopeOf(at);
  if (scope === MAIN_SCOPE) return null;
  return keptByScope(importerKept, ctx, scope, () => {
    const targets = scopesReaching(ctx, scope);
    for (const l of targets.size ? (ctx.severalNodeLaunches ?? []) : []) {
      const reach = ctx.project?.launchReach?.(l.file, targets);
      if (reach)
        return `${reach.launched}, which ${scriptNameOf(l)}:${l.line + 1} starts on several nodes (${l.from}), uses this module (${reach.where})`;
    }
    return null;
  });
}

/** `compute()` for this lint and scope, asked once (an answer per candidate slot's scope). */
function keptByScope<T>(
  store: WeakMap<RuleContext, Map<string, T>>,
  ctx: RuleContext,
  scope: string,
  compute: () => T,
): T {
  let byScope = store.get(ctx);
  if (!byScope) store.set(ctx, (byScope = new Map()));
  if (byScope.has(scope)) return byScope.get(scope)!;
  const value = compute();
  byScope.set(scope, value);
  return value;
}

/** {@link usedOnOneNodeOnly}'s answers per lint, by the slot's scope. */
const oneNodeKept = new WeakMap<RuleContext, Map<string, boolean>>();

/**
 * Whether the code of this module that holds `at` runs, as far as the project writes its launches
 * down, on one node only: some file that the project's scripts start runs it (python/project.ts
 * `reach`, as {@link importedOnSeveralNodes} follows it), and every such file's launches, in the
 * scripts (slurmLaunch.ts `startedFilesIn`) and in the Markdown documents around it, say one node
 * (`--standalone`, `--nnodes=1`, `#SBATCH --nodes=1`). Not where a script starts any other file
 * on several nodes (a reach the search misses could be that file's), where the scripts start more
 * files than are listed, nor for the `__main__` block, which no user runs.
 */
function usedOnOneNodeOnly(ctx: RuleContext, at: SyntaxNode): boolean {
  const project = ctx.project;
  const started = ctx.startedFiles ?? [];
  const scope = scopeOf(at);
  const launchReach = project?.launchReach?.bind(project);
  if (!project || !launchReach || !started.length || ctx.severalNodeLaunches?.length || scope === MAIN_SCOPE)
    return false;
  return keptByScope(oneNodeKept, ctx, scope, () => {
    const targets = scopesReaching(ctx, scope);
    if (!targets.size) return false;
    let users = 0;
    for (const l of started) {
      if (!launchReach(l.file, targets)) continue;
      users++;
      // The file's first launch that does not say one node, else its first (startedFilesIn).
      if (l.nodes !== "one" || (project.documentedLaunches?.(l.file) ?? []).some((d) => d.nodes !== "one"))
        return false;
    }
    return users > 0;
  });
}

/**
 * The scopes of this module whose run runs `scope` (python/argparseReach.ts names, as targets of
 * ProjectLookup.launchReach): for a module-level function, each module-level function whose calls
 * by name lead to it and the module level when its code does (an import runs it); for module-level
 * code and methods, the module level (any use of the module).
 */
function scopesReaching(ctx: RuleContext, scope: string): Map<string, "parses"> {
  if (scope === MODULE_SCOPE || scope === CLASS_SCOPE) return new Map([[MODULE_SCOPE, "parses"]]);
  const calls = moduleCalls(ctx.model);
  const out = new Map<string, "parses">();
  for (const s of [MODULE_SCOPE, ...calls.functions]) if (closureOf(calls, s).has(scope)) out.set(s, "parses");
  return out;
}

/**
 * Whether {@link gate} can give any slot of the file a reason: a script starts it on several nodes,
 * or, outside a test module, it calls `init_process_group` (or DeepSpeed's) or may read vLLM's rank.
 */
function mayGate(ctx: RuleContext, inits: readonly SyntaxNode[]): boolean {
  if ((ctx.launchNodes ?? []).some((l) => l.nodes === "several")) return true;
  if (!ctx.testModule && !!ctx.severalNodeLaunches?.length && !!ctx.project?.launchReach) return true;
  return !ctx.testModule && (inits.length > 0 || mayReadVllmRank(ctx.model.text));
}

/** Whether a file's text can hold vLLM's ParallelConfig.rank (RankFlow.libraryOf `vllm`): it names `parallel_config` or `ParallelConfig`, and vLLM. */
function mayReadVllmRank(text: string): boolean {
  return /\b(parallel_config|ParallelConfig)\b/.test(text) && text.includes("vllm");
}

/**
 * The calls that set up the program's process group: `torch.distributed.init_process_group`, and
 * DeepSpeed's `deepspeed.init_distributed()`, which calls it (deepspeedai/DeepSpeed
 * deepspeed/comm/comm.py:792 `init_distributed` builds a `TorchBackend`, whose constructor runs
 * `torch.distributed.init_process_group(backend, **kwargs)`, deepspeed/comm/torch.py:177, at
 * edaa7221267243c7be7fb49c5d5f5c4fb97b4641). By their last name, for the prefilter.
 */
const INIT_GROUP_CALLS: ReadonlyMap<string, readonly string[]> = new Map([
  ["init_process_group", ["torch.distributed.init_process_group"]],
  [
    "init_distributed",
    ["deepspeed.init_distributed", "deepspeed.comm.init_distributed", "deepspeed.comm.comm.init_distributed"],
  ],
]);

/** Whether a code word of {@link INIT_GROUP_CALLS} ending at `from` is called there (`(` follows), and not defined (`def` before it). */
function initCallAt(word: string): (text: string, from: number, to: number) => boolean {
  return (text, from, to) => {
    const open = /^\s*\(/.test(text.slice(from, Math.min(to, from + 64)));
    const before = text.slice(Math.max(0, from - word.length - 16), from - word.length);
    return open && !/\bdef\s+$/.test(before);
  };
}

/** The calls of {@link INIT_GROUP_CALLS} in the module (any import form). */
function initCalls(ctx: RuleContext): SyntaxNode[] {
  const paths = new Set([...INIT_GROUP_CALLS.values()].flat());
  return ctx.model
    .nodesMentioning("call", [...INIT_GROUP_CALLS.keys()], true)
    .filter((c) => c.type === "call" && paths.has(calleePath(ctx.model, c) ?? ""));
}

/** GPU039: a global rank (RANK, SLURM_PROCID, dist.get_rank(), accelerator.process_index) used as a CUDA device ordinal. */
export const rule: PythonRule = {
  meta: {
    code: "GPU039",
    name: "global-rank-as-device",
    severity: "warning",
    fixable: true,
    fixSafety: "unsafe",
    // A global rank: an environment read of RANK / SLURM_PROCID / OMPI_COMM_WORLD_RANK (the word RANK
    // or PROCID in the text), torch.distributed's get_rank, or Accelerate's process_index (python/rankFlow.ts).
    // A rank returned by a project function reaches a file with none of those: followed where the file
    // names a `local_rank` (the swapped unpacking `rank, local_rank = get_envs()` leaves the global rank
    // in a variable of that name), a documented limit of the gate that keeps the rest of a distributed
    // code base unparsed for this rule.
    // The default set reports only in files that read a local rank too (see whenNotToCare): without
    // one of its names in the text the file is skipped unless preview is on (python3-torch: 41 files parsed for this rule otherwise, 2.3 x the cold check of before).
    // Sound: a global rank is read by one of these words; the default set needs a local-rank read,
    // a launch on several nodes, or (outside test modules) a call of init_process_group: the code
    // word followed by `(`, not a `def` (gate() below).
    trigger: (t, preview, facts) =>
      (t.envWith(["RANK", "SLURM_PROCID"]) ||
        t.hasAnyWord(["get_rank", "process_index", "local_rank", "parallel_config", "ParallelConfig"]) ||
        (t.has("tensorrt_llm") && t.hasAnyWord(["mapping"]))) &&
      (preview ||
        !!facts?.severalNodes ||
        (!facts?.testModule && !!facts?.importerOnSeveralNodes) ||
        t.has("LOCAL_RANK") ||
        t.has("SLURM_LOCALID") ||
        t.hasAnyWord(["local_rank", "get_node_local_rank", "local_process_index"]) ||
        (!facts?.testModule &&
          ([...INIT_GROUP_CALLS.keys()].some((w) => t.afterWord(w, initCallAt(w))) ||
            (t.hasAnyWord(["parallel_config", "ParallelConfig"]) && t.has("vllm"))))),
    docs: {
      what: 'Reports a CUDA device ordinal whose value is the job\'s global rank: `torch.cuda.set_device(rank)`, `torch.device("cuda", rank)`, `f"cuda:{rank}"`, `model.to(rank)`, `.cuda(rank)`, `DDP(model, device_ids=[rank])`, `output_device=rank`, `device_id=rank`, the torch.cuda device queries (`get_device_properties(rank)`, `mem_get_info(rank)`, ...), a `device_map` (`from_pretrained(..., device_map={"": rank})`, also through a name the dict is assigned to, or an entry `kwargs["device_map"] = {"": rank}` of a dict the call then gets as `**kwargs`), `transformers.pipeline(device=rank)`, sglang\'s `load_model(server_args, port_args, rank)` and DeepSpeed\'s `get_accelerator().set_device(rank)`, with `rank` read from `os.environ["RANK"]`, `SLURM_PROCID`, `OMPI_COMM_WORLD_RANK`, `torch.distributed.get_rank()`, DeepSpeed\'s `deepspeed.comm.get_rank()`, Accelerate\'s `process_index`, vLLM\'s `parallel_config.rank` (also a parameter annotated with vLLM\'s `ParallelConfig`: `def init_engine(parallel_config: ParallelConfig)`) or TensorRT-LLM\'s `mapping.rank`. `rank % torch.cuda.device_count()` is not reported.',
      follows:
        "The rank is followed within the file: names to their latest assignment before the use in the same function or module, `int()`/`str()`, `a if c else b` and `a or b` where the branches agree, tuple unpacking, `self.x` set in another method of the same class or in the class body (a dataclass or pydantic field through its `default` or `default_factory`: `global_rank: int = Field(default_factory=get_global_rank)`), `obj.x = ...` and dict entries with literal keys, argparse defaults (`add_argument(\"--rank\", default=...)` read as `args.rank`), f-strings, the file's own functions' return values (also element by element where a returned tuple is unpacked) and those of a method of the same class called on `self` or `cls` (`cls._get_current_device()`; an override in a subclass is not seen), a string literal beside a rank deciding nothing (`accelerator.process_index if torch.cuda.is_available() else \"cpu\"`), the single values and the tuples that functions of the project's other modules return (`get_global_rank()` in dist_env.py returning `int(os.environ.get(\"RANK\", 0))`) (`args.rank, args.local_rank, _ = get_envs()` with `get_envs` in envs.py returning `local_rank, rank, world_size`: a swapped unpacking is found, in files that name a `local_rank`), and a rank passed as an argument to a function (of this file or another project module) or to a class of this file whose `__init__` uses that parameter as a device as it is (`zero_first(RANK)` with `dist.barrier(device_ids=[local_rank])` inside, `Generator(args, tp_rank=dist.get_rank())` whose constructor calls sglang's `load_model(server_args, port_args, tp_rank)`: reported at the argument). For the default set it also reads how the project starts the file: the commands of its shell and job scripts beside the file, in its parent folders (up to the repository root, three levels at most) and their direct subfolders, and the fenced shell blocks (```bash, ```sh, ```shell, ```console, ```zsh or none) of the Markdown documents in those folders within the file's project, which also match a file below their own folder by the end of its path (`torchrun --standalone demo.py` in debug/notes.md for debug/code/demo.py): the other project files those scripts start on several nodes, followed through their imports and calls into the project's modules to the code of this file that holds the device (a call of the function holding it, or of a function of this file that calls it; an import where it is in module-level code or a method; never this file's `__main__` block) (python/project.ts `reach`: a few modules deep; not through a module that declares `--local-rank`), torchrun's `--nnodes` and `--standalone` (also given through a variable that the script assigns once to a literal string or array: `torchrun $DISTRIBUTED_ARGS pretrain.py` after `DISTRIBUTED_ARGS=\"--nnodes 2 ...\"`; a launch with a variable among its options that the script does not assign so says nothing of its nodes, under srun too), srun's `--nodes`/`-N` and the job's `#SBATCH --nodes` (a command outside srun in a job of `#SBATCH --nodes=1` runs on that one node). Library parameters are known by name only where their source says they take a device ordinal (transformers' pipeline `device`, any `device_map`, sglang's `load_model` and `ModelRunner(gpu_id=...)`, DeepSpeed's `get_accelerator().set_device`); other libraries' parameters are not followed. Not followed: other modules' values otherwise, classes of other modules, other arithmetic, and function parameters (an `mp.spawn` worker's first parameter is its index on the node; the one exception is a parameter annotated with vLLM's `ParallelConfig`, whose `rank` vLLM documents as global): those stay silent; launches written elsewhere (a Makefile, a CI configuration, a wiki), node counts held in variables (`--nnodes=$NNODES`), and accelerate or deepspeed launches.",
      why: `On one node the global rank equals the local rank, so the program works there; on the second node of a job the global ranks go on from the first node's count (with 8 GPUs a node, ranks 8 to 15), and cuda:8 does not exist on an 8-GPU node: CUDA raises \`invalid device ordinal\` as for any ordinal beyond the visible GPUs (measured: ground-truth.md, GPU004). The torchrun documentation says the device is the local rank: "Please ensure that device_ids argument is set to be the only GPU device id that your code will be operating on. This is generally the local rank of the process. In other words, the device_ids needs to be [int(os.environ("LOCAL_RANK"))]", and "NEVER hard code any assumptions about the stable-ness of ranks or some correlation between RANK and LOCAL_RANK" (${TORCHRUN}). The PyTorch DDP tutorial's two-node torchrun example uses \`device_id = rank % torch.cuda.device_count()\` (${TUTORIAL}), which this rule does not report.`,
      example:
        'import os\nimport torch\nimport torch.distributed as dist\n\nrank = int(os.environ["RANK"])\ndist.init_process_group("nccl")\ntorch.cuda.set_device(rank)  # GPU039: cuda:8 on the second node\n',
      fix: 'import os\nimport torch\nimport torch.distributed as dist\n\nrank = int(os.environ["RANK"])\nlocal_rank = int(os.environ["LOCAL_RANK"])\ndist.init_process_group("nccl")\ntorch.cuda.set_device(local_rank)\n',
      whenNotToCare:
        "A program that only ever runs on one node (a single-node test, a one-machine script) works as written. That is why a finding is in the default set only where the program is plainly meant for several nodes: (1) the file also reads its local rank, outside test modules (`LOCAL_RANK`, `SLURM_LOCALID`, `OMPI_COMM_WORLD_LOCAL_RANK`, also through a copy of the environment such as `env = {k: os.environ[k] for k in (...)}` then `env[\"LOCAL_RANK\"]`, `get_node_local_rank()`, `.local_process_index`): it is written for launchers that start it on several nodes and has the right number at hand, so the global rank as its device is a mix-up (the fix then uses the name it keeps the local rank in); (2) a script or document of the project starts the file on several nodes (`torchrun --nnodes=2`, `#SBATCH --nodes=2` with srun; the message names it), or, outside test modules, a script of the project starts on several nodes another project file that runs the code holding the device (calls the function that holds it, directly or through the project's modules, or imports the module where the device is in module-level code or a method; a helper only another, one-node file calls does not count: `train_retriever.py`, started with `torchrun --nnodes=2`, importing `device_utils.py`; huggingface/sentence-transformers#3373; measured on public code, 2026-12-07: no finding from this path in 654 code bases, 50 of them with literal multi-node launches, nor in the ecosystem corpus); (3) the device is chosen in the function (or module code) that calls `torch.distributed.init_process_group` (or `deepspeed.init_distributed()`, which calls it), the program's own distributed setup that every launch runs, except in test modules (pytest's `test_*.py`, `*_test.py`, `conftest.py`, a `tests`, `test` or `testing` folder) and where every launch the project writes down says one node (`--standalone`, `--nnodes=1`: a README's `torchrun --standalone ... demo.py` for a one-node demo); for a module that no script or document launches (a `utils/dist.py` setup helper), the launches of the files that run its code stand for its own: where some file the project's scripts start runs that code (followed as in (2)), every such file is started on one node only, by its scripts and by the documents around it, and no script starts any file of the project on several nodes, the finding is preview (`torchrun --standalone --nproc_per_node=8 train.py` as the only launch of the train.py that calls the helper); a user started without a node count keeps it, and so does a helper none of whose users is started by a script. (4) the rank is vLLM's `ParallelConfig.rank` (in a file that names vLLM) outside test modules: vLLM documents it as \"Global rank in distributed setup\" and gives its workers their device as a separate `local_rank` (\"Local device index\"), and a vLLM deployment may span nodes (`ParallelConfig.nnodes`, Ray), so code that runs in a vLLM worker or plugin (a KV connector, a sparse-attention module) is placed by whoever deploys vLLM, not by its own launch. torchrun's default node count, a plain `python file.py` and a count in a variable say nothing either way. Elsewhere the finding is preview. Measured on the ecosystem corpus (35 code bases, 16,452 files, 2026-12-06): the default set reports the same 2 findings as before (pytorch/examples distributed/ddp/example.py, which reads its local rank; both true); gate (3) adds none, because its one candidate, ml-engineering's debug/code/collective_mismatch.py (a one-node demo of a collective hang, a harmless finding), is documented in debug/pytorch.md as `torchrun --standalone --nproc_per_node=2 collective_mismatch.py`; peft's tests/training/lora_tp.py, run with `--nproc_per_node=2`, and verl's five findings under tests/ are in test modules. On the recall benchmark gate (3) finds the gpt-oss and LightX2V cases (a tensor-parallel server's and a platform hook's setup), gate (4) the LMCache KV-connector case. Gate (4) was measured on public code (2026-12-07): 15 findings of vLLM's rank as a device outside tests, in 7 distinct files (LMCache's vLLM adapter and its copies in LMCache-Ascend and InfiniKV, three sparse-attention modules of unified-cache-management, a vLLM fork's worker), all true (5 of them a bare `torch.cuda.device(parallel_config.rank)`, never entered, the rest a device the code allocates on); LMCache-Ascend and aphrodite-engine's copy of the adapter later changed it to `parallel_config.rank % device_count()`; no vLLM-family code base scanned (aphrodite-engine, vllm-omni, vllm-ascend, Mooncake, unified-cache-management) had a finding it would add that is not one of these, and the ecosystem corpus has no such code. TensorRT-LLM's `mapping.rank` stays preview: of 7 public findings, 5 are true (vision encoders of the PyTorch backend put on `cuda:{model_config.mapping.rank}`, the pattern NVIDIA/TensorRT-LLM#8070 fixed) but 2 are in its early LLM API, whose ModelLoader called `torch.cuda.set_device(self.mapping.rank)` in a pool of MPI workers it started on one node after asserting `device_count() >= world_size`: right there. A global rank handed to a library helper (`prepare_scattermoe(rank=dist.get_rank())`) stays preview too: nothing in such a file says several nodes, and the one library-module candidate on the ecosystem corpus (ColossalAI's rpc_worker.py, in a method named exposed_compute_only_for_test) is test code. Before these gates, 46 preview findings on 18 of the code bases were all global ranks used as devices, 45 of them in single-node tests and demos (ColossalAI 38, Megatron-LM 3, accelerate 3, ml-engineering 1); they stay preview. The quick fix is not safe to apply blindly, since the same variable may be used elsewhere as the global rank (for data sharding or logging), which must stay global.",
      references: [
        `PyTorch, torchrun (Elastic Launch), Environment Variables: "LOCAL_RANK - The local rank", "RANK - The global rank"; Important Notices 3 and 6 (${TORCHRUN})`,
        `PyTorch tutorial 'Getting Started with Distributed Data Parallel', Initialize DDP with torch.distributed.run/torchrun: \`device_id = rank % torch.cuda.device_count()\` for a two-node run (${TUTORIAL})`,
        "Measured: docs/ground-truth.md, GPU004 (an ordinal beyond the visible GPUs: `invalid device ordinal`)",
        'srun(1), OUTPUT ENVIRONMENT VARIABLES: SLURM_PROCID "The MPI rank (or relative process ID) of the current process", SLURM_LOCALID "Node local task ID for the process within a job" (https://slurm.schedmd.com/srun.html)',
        'Open MPI, Environment variables set for MPI applications: OMPI_COMM_WORLD_RANK "the MPI rank of this process in MPI_COMM_WORLD", OMPI_COMM_WORLD_LOCAL_RANK "the relative rank of this process on this node within its job" (https://docs.open-mpi.org/en/v5.0.x/tuning-apps/environment-var.html)',
        'Transformers, `pipeline` docstring (src/transformers/pipelines/__init__.py): device "Defines the device (*e.g.*, `"cpu"`, `"cuda:1"`, `"mps"`, or a GPU ordinal rank like `1`) on which this pipeline will be allocated"; `PreTrainedModel.from_pretrained` docstring (src/transformers/modeling_utils.py): device_map "Passing `device_map = 0` means put the whole model on GPU 0"',
        'DeepSpeed, deepspeed/comm/comm.py:553 `get_rank(group=None)`: "Returns the rank of the current process in the provided ``group`` or the default group if none was provided"; :573 `get_local_rank()`: "local rank (= GPU device ID)" (deepspeedai/DeepSpeed at 38327e07f6)',
        "DeepSpeed, accelerator/cuda_accelerator.py:76 `def set_device(self, device_index): torch.cuda.set_device(device_index)`; deepspeed/comm/comm.py:792 `init_distributed` → deepspeed/comm/torch.py:177 `torch.distributed.init_process_group(backend, **kwargs)` (deepspeedai/DeepSpeed at edaa722126)",
        "Python, dataclasses.field: 'default_factory: If provided, it must be a zero-argument callable that will be called when a default value is needed for this field' (https://docs.python.org/3/library/dataclasses.html#dataclasses.field); pydantic, Field: 'default_factory: A callable to generate the default value' (https://docs.pydantic.dev/latest/api/fields/#pydantic.fields.Field)",
        "sglang, python/sglang/bench_one_batch.py `load_model(server_args, port_args, tp_rank)`: `ModelRunner(..., gpu_id=tp_rank, tp_rank=tp_rank, ...)` (https://github.com/sgl-project/sglang)",
        'Accelerate, Accelerator / PartialState attributes: process_index "The index of the current process", local_process_index "The index of the current process on the current server" (https://huggingface.co/docs/accelerate/package_reference/state)',
        'vLLM, vllm/config/parallel.py ParallelConfig: rank "Global rank in distributed setup", nnodes "num of nodes for multi-node distributed inference" (vllm-project/vllm at 00193b82b0); vllm/v1/worker/worker_base.py:53-54 WorkerBase.__init__ "local_rank: Local device index", "rank: Global rank in distributed setup", :76 `self.parallel_config.rank = rank` (at 0243225317); vllm/v1/worker/gpu_worker.py Worker.init_device: `self.device = torch.device(f"cuda:{self.local_rank}")`, then `current_platform.set_device(self.device)` (at 35d5cda123) (https://github.com/vllm-project/vllm)',
        'TensorRT-LLM, tensorrt_llm/mapping.py Mapping: `local_rank` is `self.rank % self.gpus_per_node`, `node_rank` is `self.rank // self.gpus_per_node`, the docstring\'s "2 nodes with 16 GPUs" layout (NVIDIA/TensorRT-LLM at 05ebebb2c1); NVIDIA/TensorRT-LLM#8070 (vision encoders on `cuda:{model_config.mapping.rank}`, review: "Why not `mapping.get_local_rank()`?"); LMCache/LMCache#814 (`torch.device(f"cuda:{parallel_config.rank}")`: invalid device ordinal on the second node)',
      ],
    },
  },
  check(ctx) {
    const flow = new RankFlow(ctx.model, ctx.project);
    // Looked for only once a global rank is found in a device slot (it asks the project's modules).
    let localKept: LocalRead | null | undefined;
    const localRead = () => (localKept === undefined ? (localKept = localRankRead(ctx, flow)) : localKept);
    let inits: SyntaxNode[] | undefined;
    // Without preview, a finding is reported only through gate() or a local-rank read: where
    // neither can hold, the slots are not read (on python3-torch's distributed tests, a third of
    // the rule's cost went to findings the default set drops).
    if (!ctx.preview && !mayGate(ctx, (inits ??= initCalls(ctx))) && !localRead()) return;
    const seen = new Set<number>();
    const slots = deviceSlots(ctx.model);
    for (const slot of [...slots, ...argumentSlots(ctx, slots, flow)]) {
      if (seen.has(slot.ordinal.id)) continue;
      seen.add(slot.ordinal.id);
      const origin = flow.origin(slot.ordinal);
      if (origin.kind !== "global" || !origin.source) continue;
      const local = localRead();
      const library = flow.libraryOf(origin.source);
      // A local-rank read puts the finding in the default set, except in a test module (below),
      // where only gate() can.
      const localGate = !!local && !ctx.testModule;
      const why = localGate ? null : gate(ctx, slot, (inits ??= initCalls(ctx)), library);
      const src = origin.source;
      const label = src.text.length > 60 ? `${src.text.slice(0, 57)}...` : src.text;
      const expr = slot.ordinal.text.length > 40 ? `${slot.ordinal.text.slice(0, 37)}...` : slot.ordinal.text;
      ctx.report({
        range: nodeRange(slot.ordinal),
        message: `${expr} is the global rank${src.id === slot.ordinal.id ? "" : ` (${label}, ${ctx.where(src.startPosition.row)}${origin.via ? `: it returns ${origin.variable ?? "the global rank"} there, read at ${origin.via}` : ""})`} used as a CUDA device (${slot.form}): on the second node of a job with 8 GPUs a node the ranks are 8 to 15, and cuda:8 does not exist there (invalid device ordinal)${why && why.kind !== "init" ? `; ${why.text}` : ""}; use the local rank: ${local ? localShown(ctx, local) : localInstead(origin, library)}`,
        related: [
          {
            range: nodeRange(src),
            message: origin.via
              ? `the global rank comes from here: ${label} (read at ${origin.via})`
              : `the global rank is read here: ${label}`,
          },
          ...(local
            ? [
                {
                  range: nodeRange(local.node),
                  message: `the local rank is read here: ${local.node.text.length > 60 ? `${local.node.text.slice(0, 57)}...` : local.node.text}`,
                },
              ]
            : []),
        ],
        fix: localNameFix(slot, local) ?? localRankFix(ctx, slot, origin),
        // Default where the program reads its local rank too (written for several nodes, the right
        // number at hand), is started on several nodes, or chooses its device in its own distributed
        // setup (gate()); elsewhere preview: on the ecosystem corpus those were single-node tests. A
        // test module is preview even with a local-rank read: single-node tests that set and read
        // LOCAL_RANK in a multiprocessing helper (vLLM-derived engines' tests/distributed) use the
        // global rank as a device harmlessly.
        preview: !localGate && !why,
      });
    }
  },
};
