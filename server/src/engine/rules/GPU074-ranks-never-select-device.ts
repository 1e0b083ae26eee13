import type { PythonRule, RuleContext } from "../rule";
import type { InitEvent } from "../python/events";
import { nodeRange } from "../python/events";
import type { SyntaxNode } from "../python/parser";
import { stringValue } from "../python/parser";
import { envWritesAnywhere } from "../python/model";
import { mayReadRank } from "../python/rankFlow";
import { isMainGuard } from "../python/walker";
import { scriptNameOf, tasksShareGpus, type SlurmLaunch } from "../slurmLaunch";
import { JAX_INIT_FUNCTIONS, SET_DEVICE_PATHS } from "../frameworks";
import { callArgs, calleePath } from "./shared/py";

const MEASURED = "test/fixtures/slurm/python-launch/measured.md";
const CUPY_DOC =
  'CuPy documentation, cupy.cuda.Device: "The current device is selected by default" (https://docs.cupy.dev/en/stable/reference/generated/cupy.cuda.Device.html); CUDA Runtime API, cudaSetDevice: "Sets device as the current device for the calling host thread. Any device memory subsequently allocated from this host thread using cudaMalloc() ... will be physically resident on device"';
const JAX_DOC =
  'JAX documentation, GPU memory allocation: "JAX will preallocate 75% of the total GPU memory when the first JAX operation is run", and among the "Common causes of OOM failures": "Running multiple JAX processes concurrently" (https://docs.jax.dev/en/latest/gpu_memory_allocation.html)';
const TORCH_DOC =
  'PyTorch documentation, CUDA semantics: torch.cuda "keeps track of the currently selected GPU, and all CUDA tensors you allocate will by default be created on that device. The selected device can be changed with a torch.cuda.device context manager" (https://pytorch.org/docs/stable/notes/cuda.html)';

const SLURM_AT = "SchedMD/slurm@284c3b95f08a2dc2478499837b03355e1b9c5c75";
const SLURM_DOC = `Slurm documentation (${SLURM_AT}): srun(1), doc/man/man1/srun.1:1494-1496, --gres: "By default, a job step is allocated all of the generic resources that have been requested by the job"; :3160, --tres-bind: "By default, most tres are not bound to individual tasks"; per-task binding comes from --gpus-per-task (:1467 "This option will implicitly set --tres-bind=gres/gpu:per_task:<gpus_per_task>"), --ntasks-per-gpu (:2476, "single:<ntasks>"), --tres-per-task with gres/gpu (:3273), --gpu-bind/--tres-bind and their input variables SLURM_GPU_BIND (:3781) and SLURM_TRES_BIND (:4090); Generic Resource Scheduling, doc/html/gres.shtml:411-413: "the environment variable CUDA_VISIBLE_DEVICES is set for each job step to determine which GPUs are available for its use on each node"`;
const SITE_DOC = `slurm.conf(5) (${SLURM_AT} doc/man/man5/slurm.conf.5): CliFilterPlugins, :829 "No cli_filter plugins are used by default"; TaskProlog, :6895-6911, a site program whose "export NAME=value" output "Will set environment variables for the task being spawned"`;

/** The node-local rank as mpi4py gives it, for messages. */
const NODE_RANK = "MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED).rank";

/**
 * Calls that choose the process's device, or hand the choice to a library that makes it per process
 * (a process group, Lightning, accelerate, a JAX mesh over several devices): anywhere in the file,
 * the rule is silent.
 */
const SELECTS = new Set([
  ...SET_DEVICE_PATHS,
  "torch.set_default_device",
  "torch.cuda.device",
  "torch.distributed.init_process_group",
  "deepspeed.init_distributed",
  "accelerate.Accelerator",
  "lightning.Trainer",
  "lightning.Fabric",
  "lightning.pytorch.Trainer",
  "lightning.fabric.Fabric",
  "pytorch_lightning.Trainer",
  "torch.nn.DataParallel",
  "cupy.cuda.runtime.setDevice",
  "cupy.cuda.Device",
  "cupy.cuda.device.Device",
  "cupy.cuda.using_allocator",
  "numba.cuda.select_device",
  "jax.distributed.initialize",
  "jax.default_device",
  "jax.pmap",
  "jax.shard_map",
  "jax.experimental.shard_map.shard_map",
  "jax.make_mesh",
  "jax.sharding.Mesh",
  "jax.experimental.mesh_utils.create_device_mesh",
]);

/** Variables that choose the devices a process sees. */
const VISIBLE = new Set(["CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"]);

/** Words of the selections above, for the project's other files (python/project.ts `projectMentions`). */
const SELECT_WORDS = [
  "set_device",
  "setDevice",
  "select_device",
  "cuda.Device",
  "VISIBLE_DEVICES",
  "default_device",
  "local_device_ids",
];

/** mpi4py's world communicator, and what of it says the program runs as several processes. */
const WORLD = "mpi4py.MPI.COMM_WORLD";
const WORLD_USES = new Set(["rank", "size", "Get_rank", "Get_size"]);

/** JAX modules whose calls create arrays on the default device. */
const JAX_WORK = ["jax.numpy.", "jax.random.", "jax.lax.", "jax.nn.", "jax.scipy.", "jax.image."];
/** Numba's calls that allocate on the current device. */
const NUMBA_WORK = new Set(["numba.cuda.to_device", "numba.cuda.device_array", "numba.cuda.device_array_like"]);

/** Why the file runs as several processes on one node, for the message. */
interface Evidence {
  text: string;
  /** The library's own way to pick the node-local device, for the message. */
  how: (framework: string) => string;
  /** A job script of the project starts the file in srun tasks that share a node's GPUs (the default check); else an MPI rank use (preview). */
  srun: boolean;
}

/** The first `COMM_WORLD.rank`/`.size`/`.Get_rank()`/`.Get_size()` of the file (also through an alias), or null. */
function worldUse(ctx: RuleContext): SyntaxNode | null {
  for (const n of ctx.model.nodesMentioning("attribute", [...WORLD_USES], true)) {
    const path = ctx.model.resolve(n);
    if (!path?.startsWith(`${WORLD}.`) || !WORLD_USES.has(path.slice(WORLD.length + 1))) continue;
    return n.parent?.type === "call" && n.parent.childForFieldName("function")?.id === n.id ? n.parent : n;
  }
  return null;
}

/** An srun launch of this file whose tasks on a node all see the same GPUs. */
function sharedLaunch(ctx: RuleContext): SlurmLaunch | null {
  return (ctx.slurm ?? []).find(tasksShareGpus) ?? null;
}

/** The srun launch first (the default check), else, with preview on, the file's MPI rank use. */
function evidenceOf(ctx: RuleContext): Evidence | null {
  const l = sharedLaunch(ctx);
  if (l) {
    return {
      text: `${scriptNameOf(l)}:${l.line + 1} starts ${l.processesPerNode} srun tasks per node that each see the same ${l.gpusPerProcess} GPUs (${l.gpusFrom}, no per-task binding)`,
      how: (fw) => selectHint(fw, 'int(os.environ["SLURM_LOCALID"])'),
      srun: true,
    };
  }
  const world = ctx.preview ? worldUse(ctx) : null;
  if (!world) return null;
  return {
    text: `the program runs as several MPI processes (\`${world.text}\`, ${ctx.where(world.startPosition.row)})`,
    how: (fw) => selectHint(fw, NODE_RANK),
    srun: false,
  };
}

function selectHint(framework: string, rank: string): string {
  switch (framework) {
    case "cupy":
      return `cupy.cuda.runtime.setDevice(${rank})`;
    case "jax":
      return `os.environ["CUDA_VISIBLE_DEVICES"] = str(${rank}) before JAX starts, or jax.distributed.initialize(local_device_ids=[${rank}])`;
    case "numba":
      return `numba.cuda.select_device(${rank})`;
    default:
      return `torch.cuda.set_device(${rank})`;
  }
}

/**
 * Whether the file chooses a device anywhere (a call of {@link SELECTS}, a `jax_cuda_visible_devices`
 * setting, an index into `jax.devices()`/`jax.local_devices()`, a write of a `*_VISIBLE_DEVICES`
 * variable), or imports a project module while some other file of the project names a way to.
 */
function selectsSomewhere(ctx: RuleContext): boolean {
  const m = ctx.model;
  if (envWritesAnywhere(m).some((w) => VISIBLE.has(w.variable))) return true;
  for (const call of m.nodesOfType("call")) {
    if (!call) continue;
    const path = calleePath(m, call);
    if (!path) continue;
    if (SELECTS.has(path)) return true;
    if (path === "jax.config.update" && stringValue(callArgs(call).positional[0]) === "jax_cuda_visible_devices")
      return true;
    if ((path === "jax.devices" || path === "jax.local_devices") && call.parent?.type === "subscript") return true;
  }
  const project = ctx.project;
  if (project?.isProjectModule && [...m.symbols.values()].some((p) => project.isProjectModule!(p)))
    return project.projectMentions?.(SELECT_WORDS) != null;
  return false;
}

/** A torch device expression that names no index: `"cuda"`, `torch.device("cuda")`, `"cuda" if ... else "cpu"`. */
function bareCuda(ctx: RuleContext, n: SyntaxNode | null | undefined): boolean {
  if (!n) return false;
  if (n.type === "conditional_expression") return bareCuda(ctx, n.namedChildren[0]);
  if (n.type === "parenthesized_expression") return bareCuda(ctx, n.namedChildren[0]);
  if (n.type === "string") return stringValue(n) === "cuda";
  if (n.type !== "call" || calleePath(ctx.model, n) !== "torch.device") return false;
  const { positional, keywords } = callArgs(n);
  return positional.length === 1 && keywords.size === 0 && bareCuda(ctx, positional[0]);
}

/**
 * What a torch event does with the device: `work` (it puts something on the current device:
 * `.cuda()`, `.to("cuda")`, `device="cuda"`), `chosen` (it names another device, or one the rule
 * cannot read: the program may choose there), or `none` (no device: a query).
 */
function torchUse(ctx: RuleContext, call: SyntaxNode): "work" | "chosen" | "none" {
  if (call.type !== "call") return "none";
  const fn = call.childForFieldName("function");
  const name = fn?.type === "attribute" ? fn.childForFieldName("attribute")?.text : null;
  const { positional, keywords } = callArgs(call);
  let device: SyntaxNode | undefined = keywords.get("device");
  if (name === "cuda" && !device) return positional.length === 0 ? "work" : "chosen";
  if (name === "to" && !device) device = positional.find((a) => a.type !== "identifier" || a.text !== "non_blocking");
  if (!device) return "none";
  // A module-level name bound to a bare device (`device = torch.device("cuda" if ... else "cpu")`).
  if (device.type === "identifier") device = ctx.model.valueOf(device.text, device.startIndex) ?? device;
  return bareCuda(ctx, device) ? "work" : "chosen";
}

/** What one init event is for this rule: the first GPU work, a possible choice of device (stop), or neither. */
function classify(ctx: RuleContext, e: InitEvent): "work" | "chosen" | "none" {
  if (e.project) return "chosen"; // the project's own code: it may choose the device
  const path = e.node.type === "call" ? calleePath(ctx.model, e.node) : null;
  if (!path) return "none";
  switch (e.framework) {
    case "cupy":
      return (path.startsWith("cupy.") || path.startsWith("cupyx.")) && !path.startsWith("cupy.cuda.")
        ? "work"
        : "none";
    case "jax":
      if (path === "jax.device_put") return callArgs(e.node).positional.length === 1 ? "work" : "chosen";
      if (JAX_INIT_FUNCTIONS.has(path.slice(4))) return "none";
      return JAX_WORK.some((p) => path.startsWith(p)) ? "work" : "none";
    case "numba":
      return NUMBA_WORK.has(path) ? "work" : "none";
    case "torch":
      return torchUse(ctx, e.node);
    default:
      return "none";
  }
}

/** Whether `n` runs only under a condition other than the `if __name__ == "__main__":` guard (one rank may be the only one). */
function conditional(n: SyntaxNode): boolean {
  for (let p = n.parent; p; p = p.parent) {
    if (p.type === "function_definition" || p.type === "lambda") return false;
    if (p.type === "if_statement" && isMainGuard(p)) continue;
    if (p.type === "if_statement" || p.type === "conditional_expression" || p.type === "boolean_operator") return true;
    if (p.type === "except_clause") return true;
  }
  return false;
}

/** The first GPU work on the module's timeline before anything may choose a device, or null. */
function firstWork(ctx: RuleContext): InitEvent | null {
  for (const e of ctx.model.events) {
    if (e.kind !== "init") continue;
    const what = classify(ctx, e);
    if (what === "chosen") return null;
    if (what === "work" && !conditional(e.node)) return e;
  }
  return null;
}

/** A constructor's `self.X = "cuda"` (also `"cuda" if ... else "cpu"`), with the class's methods that put work on `self.X`. */
interface DeviceAttribute {
  cls: string;
  assign: SyntaxNode;
  attr: string;
  /** Methods of the class (not the constructor) that pass `self.X` as a device (`.to(self.X)`, `device=self.X`). */
  methods: Set<string>;
}

/** The methods (by name) directly in a class body, under decorators too. */
function methodsOf(cls: SyntaxNode): Map<string, SyntaxNode> {
  const out = new Map<string, SyntaxNode>();
  for (const c of cls.childForFieldName("body")?.namedChildren ?? []) {
    const def = c?.type === "decorated_definition" ? c.childForFieldName("definition") : c;
    const name = def?.type === "function_definition" ? def.childForFieldName("name")?.text : null;
    if (def && name) out.set(name, def);
  }
  return out;
}

/** Whether `fn` passes `self.<attr>` as a device: `.to(self.attr)`, `device=self.attr`. */
function usesAsDevice(fn: SyntaxNode, attr: string): boolean {
  const isIt = (n: SyntaxNode | null | undefined) =>
    n?.type === "attribute" &&
    n.childForFieldName("object")?.text === "self" &&
    n.childForFieldName("attribute")?.text === attr;
  for (const call of fn.descendantsOfType("call")) {
    if (!call) continue;
    const f = call.childForFieldName("function");
    const { positional, keywords } = callArgs(call);
    if (isIt(keywords.get("device"))) return true;
    if (f?.type === "attribute" && f.childForFieldName("attribute")?.text === "to" && isIt(positional[0])) return true;
  }
  return false;
}

function deviceAttributes(ctx: RuleContext): DeviceAttribute[] {
  const out: DeviceAttribute[] = [];
  for (const [cls, node] of ctx.model.classes) {
    const methods = methodsOf(node);
    const init = methods.get("__init__");
    if (!init) continue;
    for (const assign of init.descendantsOfType("assignment")) {
      const left = assign?.childForFieldName("left");
      if (!assign || left?.type !== "attribute" || left.childForFieldName("object")?.text !== "self") continue;
      if (!bareCuda(ctx, assign.childForFieldName("right"))) continue;
      const attr = left.childForFieldName("attribute")?.text ?? "";
      const users = new Set(
        [...methods].filter(([n, def]) => n !== "__init__" && usesAsDevice(def, attr)).map(([n]) => n),
      );
      if (users.size) out.push({ cls, assign, attr, methods: users });
    }
  }
  return out;
}

/**
 * Where a program that a job script starts in tasks that share a node's GPUs builds the class and
 * then calls one of its device methods (by name), before anything in its run selects a device (a
 * call of {@link SELECTS}, a `*_VISIBLE_DEVICES` write anywhere in it): for the message, or null.
 */
function launchedUse(ctx: RuleContext, a: DeviceAttribute): { how: string; readsRank: boolean } | null {
  for (const l of ctx.startedFiles ?? []) {
    if (!l.shared) continue;
    const run = ctx.project?.launchedCalls?.(l.file);
    if (!run || run.writesVisible) continue;
    let built: string | null = null;
    for (const c of run.calls) {
      if (c.path && SELECTS.has(c.path)) break;
      if (!built && c.here && c.name === a.cls) built = c.where;
      else if (built && !c.path && c.name && a.methods.has(c.name)) {
        const s = l.shared;
        return {
          how: `${c.where.replace(/:\d+$/, "")}, which ${scriptNameOf(s)}:${s.line + 1} starts in ${s.processesPerNode} srun tasks per node that each see the same ${s.gpusPerProcess} GPUs (${s.gpusFrom}, no per-task binding), builds ${a.cls} (${built}) and calls its ${c.name} (${c.where}) before anything selects a device`,
          readsRank: run.readsRank,
        };
      }
    }
  }
  return null;
}

/** GPU074 for a class whose constructor keeps a bare "cuda" that a launched program uses before selecting a device. */
function checkLaunchedClasses(ctx: RuleContext): void {
  if (!ctx.startedFiles?.some((l) => l.shared) || !ctx.project?.launchedCalls) return;
  const attrs = deviceAttributes(ctx);
  if (!attrs.length || selectsSomewhere(ctx)) return;
  for (const a of attrs) {
    const use = launchedUse(ctx, a);
    if (!use) continue;
    ctx.report({
      range: nodeRange(a.assign),
      message: `self.${a.attr} is a bare "cuda", the current device, GPU 0 until the process calls torch.cuda.set_device, but ${use.how}: every task of a node works on GPU 0; choose the task's GPU from its local rank, e.g. torch.device("cuda", int(os.environ["SLURM_LOCALID"]))`,
      // A program that reads its rank may build and use the class on some ranks only: preview.
      ...(use.readsRank || mayReadRank(ctx.model) ? { preview: true } : {}),
    });
  }
}

/** The framework's default device and its consequence, for the message. */
function consequence(framework: string): string {
  switch (framework) {
    case "jax":
      return "JAX puts its arrays on the first visible GPU, and the first process preallocates 75% of that GPU's memory there (the next one fails to take its own 75%, logs out-of-memory errors and falls back to smaller pools: measured)";
    case "cupy":
      return "CuPy allocates on the current device, GPU 0 until the process selects another";
    case "numba":
      return "Numba allocates on the current device, GPU 0 until the process selects another";
    default:
      return 'a bare "cuda" is the current device, GPU 0 until the process calls torch.cuda.set_device';
  }
}

const WHAT =
  'Reports the first GPU work (a CuPy array, a JAX array or computation, a Numba device array, a torch tensor put on a bare `"cuda"` device or `.cuda()`) of a program that runs as several processes on a node, when nothing in the file selects each process\'s device first. Several processes means: the file uses mpi4py\'s `COMM_WORLD` rank or size, or a Slurm job script of the project starts it with `srun` in more than one task per node that each see the same GPUs (`--gres=gpu:N`, `--gpus-per-node=N` with N > 1, no `--gpus-per-task` or `--gpu-bind`). The srun check is in the default set when the program never reads its rank; the MPI check, and srun programs that read their rank, are preview. Also reports, in a module such a job script\'s program uses, a constructor\'s `self.device = "cuda"` (or `"cuda" if torch.cuda.is_available() else "cpu"`) when the started program builds that class and calls one of its methods that put tensors on that device before anything selects one.';

export const rule: PythonRule = {
  meta: {
    code: "GPU074",
    name: "ranks-never-select-device",
    severity: "warning",
    fixable: false,
    // Evidence is a COMM_WORLD use (its text names it, or an alias bound from a statement that does;
    // preview) or a job script (then the work names cuda, cupy, jax or numba, or an alias of them;
    // without preview only where a job script starts this file or another in tasks sharing GPUs).
    trigger: (t, preview, facts) =>
      (preview && t.has("COMM_WORLD")) ||
      ((preview || !!facts?.sharedGpuTasks) && t.hasAny(["cuda", "cupy", "jax", "numba"])),
    docs: {
      what: WHAT,
      follows:
        "The module's timeline (module level, the `__main__` block and the functions they call, in order) up to its first GPU work; that work must not sit under a condition other than the `__main__` guard (an `if rank == 0:` runs on one process). Silent when anything in the file (functions included) selects a device or hands the choice to a library that makes one per process: `torch.cuda.set_device`, `torch.set_default_device`, `torch.cuda.device`, `init_process_group`, `deepspeed.init_distributed`, Lightning's Trainer or Fabric, accelerate's Accelerator, `cupy.cuda.Device(...)`, `cupy.cuda.runtime.setDevice`, `numba.cuda.select_device`, `jax.distributed.initialize` (it picks the local device under Slurm and Open MPI), `jax.default_device`, `jax.pmap`, `shard_map`, a JAX mesh, an index into `jax.devices()`, `jax_cuda_visible_devices`, a write of `CUDA_VISIBLE_DEVICES` (or HIP/ROCR); when a torch device is named with an index or through a variable before the first work; when a call into the project's own code that starts CUDA comes first; and when the file imports a project module while another file of the project names a way to select a device (`set_device`, `setDevice`, `select_device`, `cuda.Device`, `VISIBLE_DEVICES`, `default_device`, `local_device_ids`). For the constructor's device: the srun-started program's own calls in execution order (its module level, `__main__` block and its own functions and constructors they call), in which it builds the class (a call that resolves to this module) and then calls, by name, a method of the class that passes `self.device` to `.to()` or `device=`, with no call of the selections above before and no `*_VISIBLE_DEVICES` write in it. For the srun launch (slurmLaunch.ts): the job script's `#SBATCH` lines and the `srun` line's own options (srun's `--ntasks-per-node`/`--ntasks`/`--nodes` over the job's; `--gres=gpu:N`, `--gpus-per-node=N`), silent when the script may bind GPUs per task or change the step's GPUs in a way not followed: `--gpus-per-task`, `--gpu-bind` (but `none`), `--accel-bind=g`, `--tres-bind`, `--ntasks-per-gpu`, `--tres-per-task`, a heterogeneous job (`#SBATCH hetjob`, `--het-group`), `--multi-prog`, a step `--gres` without a GPU count (`--gres=none`), an assignment of a Slurm input variable for GPUs or GRES (`SLURM_GPU_BIND`, `SLURM_TRES_BIND`, `SLURM_STEP_GRES`, ...), a CUDA_VISIBLE_DEVICES the script sets or passes, or launcher options held in a variable it cannot read. A finding is preview (not default) when the program may read its rank anywhere (an environment rank variable such as `SLURM_PROCID`, `LOCAL_RANK`, `PMI_RANK`, or a name such as `rank`, `local_rank`, `get_rank`, `process_index`, `is_main_process`): it may do the work on some ranks only (`if rank == 0: evaluate()`), which the timeline does not tell. Not followed: the launch of an MPI program (`mpirun -np 4` may put one process on each of four nodes), GPU work in modules the file imports, `srun bash -c '...'` and wrapper scripts (not read as a launch of the file), and a site's own settings (a cli_filter plugin, a TaskProlog, SLURM_GPU_BIND in the login environment).",
      why: `A process works on its current CUDA device, which is device 0 of those it sees until it selects another. ${CUPY_DOC}. ${TORCH_DOC}. ${JAX_DOC}. Processes that all see a node's GPUs (MPI ranks started by mpirun, srun tasks without per-task GPU binding: ${SLURM_DOC}; measured on Slurm 22.05.8, ${MEASURED}: with --gpus=2 and no per-task option both tasks see CUDA_VISIBLE_DEVICES=0,1) therefore all work on GPU 0 while the others stay idle: they compete for its memory and time, a JAX process preallocates 75% of it and the next one cannot (measured with jax 0.11.2 on one H100, verify/results-restore-shared-h100.json: two JAX processes started at once both finish, the second after logging out-of-memory errors for its pool and for cuBLAS and falling back to smaller pools), NCCL refuses two ranks on one GPU (docs/ground-truth.md, GPU011), and on GPUs in Exclusive_Process mode the second process cannot create a context at all. Reported cases: JoonhoLee-Group/ipie#91 (MPI tasks with CuPy all on GPU 0), mpi4jax/mpi4jax#194 (two MPI processes with JAX on the first GPU), ecmwf/anemoi-core#431 (srun tasks building a graph on "cuda" before Lightning set the device).`,
      example:
        "from mpi4py import MPI\nimport cupy\n\ncomm = MPI.COMM_WORLD\nx = cupy.arange(10) * comm.rank  # GPU074: every MPI process of a node allocates on GPU 0\nprint(comm.allreduce(float(x.sum().get())))\n",
      fix: "from mpi4py import MPI\nimport cupy\n\ncomm = MPI.COMM_WORLD\ncupy.cuda.runtime.setDevice(comm.Split_type(MPI.COMM_TYPE_SHARED).rank)\nx = cupy.arange(10) * comm.rank\nprint(comm.allreduce(float(x.sum().get())))\n",
      whenNotToCare:
        "The srun check (default) follows Slurm's documented defaults with no site settings: a site that binds GPUs per task by itself (a cli_filter plugin that sets `--gpu-bind`, a TaskProlog that exports CUDA_VISIBLE_DEVICES per task, SLURM_GPU_BIND set by a module in the login environment; none is on by default, " +
        SITE_DOC +
        ") gives each task its own GPU 0, and the program works as written there: say so with `# noqa: GPU074`. On public code (2026-12-08, session 71): 163 code bases whose Slurm job scripts run srun with GPUs, where 16 programs are started in srun tasks that share a node's GPUs; each of the 16 selects a device or hands the choice to a library (set_device after init_process_group, Lightning, DeepSpeed) or does its GPU work in other modules: no finding, with or without preview. Reported case: ecmwf/anemoi-core#431. The MPI check is preview: whether several MPI processes share a node is not in the file, and public findings are too few to measure (2026-12-07: none on the 37 code bases of the ecosystem corpus; four on public MPI examples and tutorials, each accurate, all four short demos that still run with every rank on GPU 0). An MPI program run with one process per node (or per GPU on one-GPU nodes), or with a launcher or wrapper that sets CUDA_VISIBLE_DEVICES per process (`mpirun ... bash -c 'CUDA_VISIBLE_DEVICES=$OMPI_COMM_WORLD_LOCAL_RANK python x.py'`, Slurm's `--gpus-per-task=1`), works as written; say so with `# noqa: GPU074`. A JAX program that runs one process per node and uses all its GPUs (jax.distributed.initialize, pmap, a mesh) is not reported.",
      references: [
        CUPY_DOC,
        TORCH_DOC,
        JAX_DOC,
        SLURM_DOC,
        SITE_DOC,
        `Measured: ${MEASURED} (Slurm 22.05.8: srun -n2 --gpus=2 with no per-task option, both tasks see CUDA_VISIBLE_DEVICES=0,1; with --gpus-per-task=1 each sees one)`,
        "Measured: verify/results-restore-shared-h100.json (verify/frameworks/restore_and_shared_gpu_probe.py; 1 x H100, jax 0.11.2, cupy 14.2.0, torch 2.11.0): two JAX processes started at once on one GPU with default preallocation both finish, the second logging 'Failed to allocate device memory ... CUDA_ERROR_OUT_OF_MEMORY' and 'failed to create cublas handle'; two CuPy and two torch processes both work on device 0",
        "docs/ground-truth.md, GPU011: two ranks on GPU 0 (no set_device) fail with NCCL 'invalid usage' (measured)",
        "jax-ml/jax@cec06d116c05f0d52adfceee3d3b730fdbcb0ce5 jax/_src/clusters/cluster.py:85-87: under a detected cluster (Slurm: SLURM_LOCALID, slurm_cluster.py:24; Open MPI: OMPI_COMM_WORLD_LOCAL_RANK, ompi_cluster.py:25) jax.distributed.initialize() without local_device_ids sets them to [local process id]",
        "JoonhoLee-Group/ipie#91; mpi4jax/mpi4jax#194; ecmwf/anemoi-core#431",
      ],
    },
  },
  check(ctx) {
    if (ctx.testModule) return;
    checkLaunchedClasses(ctx);
    const evidence = evidenceOf(ctx);
    if (!evidence) return;
    const work = firstWork(ctx);
    if (!work || selectsSomewhere(ctx)) return;
    ctx.report({
      range: nodeRange(work.node),
      message: `${work.what} is this process's first GPU work and nothing before it selects a device, but ${evidence.text}: ${consequence(work.framework)}, so every process of a node works on GPU 0; select the process's GPU from its node-local rank first, e.g. ${evidence.how(work.framework)}`,
      // Default: the srun launch of a program that never reads its rank (it may work on some ranks
      // only: `if rank == 0: evaluate()`). Preview: MPI programs, and srun programs that read it.
      ...(!evidence.srun || mayReadRank(ctx.model) ? { preview: true } : {}),
    });
  },
};
