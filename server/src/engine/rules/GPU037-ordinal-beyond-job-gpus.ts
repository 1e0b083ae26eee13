import type { PythonRule, RuleContext } from "../rule";
import { envWrites } from "../rule";
import type { SyntaxNode } from "../python/parser";
import { nodeRange } from "../python/events";
import { deviceUses } from "../python/devices";
import { SET_DEVICE_PATHS } from "../frameworks";
import { scriptNameOf, type SlurmLaunch } from "../slurmLaunch";
import { callArgs, calleePath, envReadsOf, flowsFrom } from "./shared/py";

const MEASURED = "test/fixtures/slurm/python-launch/measured.md";
/** Variables that hold a task's node-local (or global) rank. */
const RANK_VARIABLES = ["SLURM_LOCALID", "LOCAL_RANK", "SLURM_PROCID", "RANK"];

/** The launch whose processes see the fewest GPUs (a known number), or null. */
function narrowest(ctx: RuleContext): (SlurmLaunch & { gpusPerProcess: number }) | null {
  let best: (SlurmLaunch & { gpusPerProcess: number }) | null = null;
  for (const l of ctx.slurm ?? []) {
    if (l.gpusPerProcess === null || l.gpusPerProcess <= 0) continue;
    if (!best || l.gpusPerProcess < best.gpusPerProcess) best = l as SlurmLaunch & { gpusPerProcess: number };
  }
  return best;
}

/** `jax.distributed.initialize` by the paths the model resolves. */
const JAX_INITIALIZE = new Set(["jax.distributed.initialize", "jax._src.distributed.initialize"]);

/**
 * The file's `jax.distributed.initialize()` calls that leave the local device to JAX's cluster
 * detection: no `local_device_ids` (keyword or fourth argument), no `cluster_detection_method`
 * (a method named may not be Slurm's; `"deactivate"` turns detection off), no `**kwargs`, and no
 * JAX_LOCAL_DEVICE_IDS written by the file (jax/_src/distributed.py reads it first).
 */
function jaxAutoDevice(ctx: RuleContext): SyntaxNode[] {
  if (!ctx.model.text.includes("initialize") || ctx.model.text.includes("JAX_LOCAL_DEVICE_IDS")) return [];
  return ctx.model.nodesOfType("call").filter((c): c is SyntaxNode => {
    if (!c || !JAX_INITIALIZE.has(calleePath(ctx.model, c) ?? "")) return false;
    const { positional, keywords } = callArgs(c);
    const splat = c.childForFieldName("arguments")?.namedChildren.some((a) => a?.type === "dictionary_splat");
    return (
      positional.length < 4 && !keywords.has("local_device_ids") && !keywords.has("cluster_detection_method") && !splat
    );
  });
}

/**
 * JAX on Slurm gives each process the local device numbered by its node-local task id: with no
 * `local_device_ids`, jax/_src/clusters/cluster.py:85-87 sets them to `[env.get_local_process_id()]`,
 * which is `int(os.environ["SLURM_LOCALID"])` (clusters/slurm_cluster.py:69-70), and
 * jax/_src/distributed.py:124-126 makes that the process's visible devices (`jax_cuda_visible_devices`;
 * jax-ml/jax at cec06d116c). Where an srun step runs more tasks per node than each task sees GPUs,
 * the tasks from that count on name a device they do not have (jax-ml/jax#29669).
 */
function checkJaxLocalDevice(ctx: RuleContext): void {
  const l = (ctx.slurm ?? []).find(
    (x) =>
      x.launcher === "srun" &&
      x.gpusPerProcess !== null &&
      x.gpusPerProcess > 0 &&
      (x.processesPerNode ?? 0) > x.gpusPerProcess,
  );
  if (!l) return;
  const k = l.gpusPerProcess!;
  const n = l.processesPerNode!;
  for (const call of jaxAutoDevice(ctx)) {
    ctx.report({
      range: nodeRange(call),
      message: `${call.text.split("\n")[0]} lets JAX pick this process's GPU by its Slurm local task id (SLURM_LOCALID: jax's Slurm cluster support sets local_device_ids to [SLURM_LOCALID]), but ${scriptNameOf(l)} line ${l.line + 1} runs ${n} tasks per node and each sees ${k} GPU${k === 1 ? "" : "s"} (${l.gpusFrom ?? "its GPU request"}): the tasks with local id ${k}..${n - 1} name a device that does not exist (invalid device ordinal); run one task per GPU, or pass local_device_ids`,
    });
  }
}

/** The module-level function whose body holds `n` (through a decorator), or null. */
function moduleFunctionOf(n: SyntaxNode): SyntaxNode | null {
  for (let p = n.parent; p; p = p.parent) {
    if (p.type !== "function_definition") continue;
    const up = p.parent?.type === "decorated_definition" ? p.parent.parent : p.parent;
    return up?.type === "module" ? p : null;
  }
  return null;
}

/**
 * Whether `arg`, a parameter of the module-level function it is used in (`def train(args,
 * local_rank)`) that the function never assigns, gets a rank at a call of that function in the
 * file (`train(args, local_rank)` after `local_rank = int(os.environ["LOCAL_RANK"])`): the
 * argument in its position, or given by its name, flows from `sources`.
 */
function viaParameter(ctx: RuleContext, arg: SyntaxNode, sources: ReadonlySet<number>): boolean {
  const fn = arg.type === "identifier" ? moduleFunctionOf(arg) : null;
  const fname = fn?.childForFieldName("name")?.text;
  const params = fn?.childForFieldName("parameters")?.namedChildren ?? [];
  const names = params.map((p) => (p?.type === "identifier" ? p.text : (p?.childForFieldName("name")?.text ?? null)));
  const k = names.indexOf(arg.text);
  if (
    !fn ||
    !fname ||
    k < 0 ||
    params.slice(0, k).some((p) => p?.type !== "identifier" && !p?.type.endsWith("_parameter"))
  )
    return false;
  const body = fn.childForFieldName("body")?.text ?? "";
  if (new RegExp(`(?:^|[^\\w.])${arg.text}\\s*(?:[-+*/%]?=)(?!=)`).test(body)) return false; // reassigned in the function
  for (const call of ctx.model.nodesOfType("call")) {
    const f = call?.childForFieldName("function");
    if (!call || f?.type !== "identifier" || f.text !== fname || moduleFunctionOf(call) === fn) continue;
    const { positional, keywords } = callArgs(call);
    if (positional.slice(0, k + 1).some((a) => a.type === "list_splat" || a.type === "dictionary_splat")) continue;
    const given = keywords.get(arg.text) ?? positional[k];
    if (given && flowsFrom(ctx.model, given, sources)) return true;
  }
  return false;
}

/** GPU037: a device ordinal at or beyond the GPUs each process gets from the job script that starts the file. */
export const rule: PythonRule = {
  meta: {
    code: "GPU037",
    name: "ordinal-beyond-job-gpus",
    severity: "warning",
    fixable: true,
    fixSafety: "unsafe",
    // A device use (the words cuda or device: python/devices.ts `deviceUses`); runs only when a job
    // script starts the file.
    trigger: (t) => t.has("cuda") || t.has("device") || (t.has("distributed") && t.has("initialize")),
    needs: "slurm",
    docs: {
      what: "In a Python file that a Slurm job script of the project starts (see GPU036 for where job scripts are looked for), compares device ordinals with the GPUs each of its processes gets: `--gpus-per-task=k` (srun's or the job's) gives each task k, `--gres=gpu:N` / `--gpus-per-node=N` without a per-task option gives every task and the batch step all N. Reports `cuda:N`, `set_device(N)`, `device_ids=[...]` with N at or beyond that count, and, when each task gets one GPU and several tasks run per node, `set_device(local_rank)` (or `torch.device(\"cuda\", local_rank)`) with the rank read from SLURM_LOCALID, LOCAL_RANK, SLURM_PROCID or RANK. Also `jax.distributed.initialize()` without `local_device_ids` when an srun step runs more tasks per node than each task sees GPUs: JAX on Slurm gives each process the local device numbered by its local task id (jax-ml/jax#29669). A file that writes CUDA_VISIBLE_DEVICES itself is left to GPU004.",
      follows:
        'The project\'s job scripts that start the file (looked for as for GPU036), with the GPUs each process gets from their `#SBATCH` and `srun` options; literal device ordinals anywhere in the file; and `set_device` or `torch.device("cuda", ...)` whose value comes from a rank variable (SLURM_LOCALID, LOCAL_RANK, SLURM_PROCID, RANK) through names assigned in the file, or through a parameter of a module-level function that the function never reassigns and that a call of it in the file gives such a value (`def train(args, local_rank)` ... `train(args, local_rank)` after `local_rank = int(os.environ["LOCAL_RANK"])`; by position or by name, no `*`/`**` argument up to it). `jax.distributed.initialize()` calls without `local_device_ids`, a fourth argument, `cluster_detection_method` or `**kwargs`, in a file that does not name JAX_LOCAL_DEVICE_IDS. Not followed: `--gpu-bind` (except `--gpu-bind=none` without a per-task request, which binds nothing), counts held in shell variables, devices chosen in other modules, ranks passed in as parameters of methods, nested functions or functions called from other modules.',
      why: `Slurm lists only the GPUs it gave a process in its CUDA_VISIBLE_DEVICES, and CUDA numbers the visible devices from 0. Measured on Slurm 22.05.8 (${MEASURED}): with \`srun -n2 --gpus-per-task=1\` task 0 sees \`CUDA_VISIBLE_DEVICES=0\` and task 1 sees \`CUDA_VISIBLE_DEVICES=1\`: one device each, \`cuda:0\`. An ordinal beyond the visible devices raises \`invalid device ordinal\` (measured on 2 x H200: ground-truth.md, \`CUDA_VISIBLE_DEVICES="1"\` then \`set_device(1)\`), so \`set_device(local_rank)\` fails in every task but the first. With \`--gpus=2\` and no per-task option both tasks see \`0,1\` (measured), and there \`set_device(local_rank)\` is right.`,
      example:
        '# train.py, started by a job script with `#SBATCH --ntasks-per-node=4` and `#SBATCH --gpus-per-task=1`: `srun python train.py`\nimport os\nimport torch\n\nlocal_rank = int(os.environ["SLURM_LOCALID"])\ntorch.cuda.set_device(local_rank)  # GPU037: each task sees only cuda:0\n',
      fix: "# train.py, started by a job script with `#SBATCH --ntasks-per-node=4` and `#SBATCH --gpus-per-task=1`: `srun python train.py`\nimport os\nimport torch\n\ntorch.cuda.set_device(0)  # Slurm gave this task one GPU\n",
      whenNotToCare:
        "When the job script is not how the file is run any more. `--gpu-bind` and counts held in variables are not followed (the rule stays silent). The workstation's own GPU count (GPU017) is not used for a file that a job script starts.",
      references: [
        `Measured: ${MEASURED} (CUDA_VISIBLE_DEVICES per task under --gpus-per-task and --gpus)`,
        "Slurm, 'Generic Resource (GRES) Scheduling', GPU Management: CUDA_VISIBLE_DEVICES is set for each job step (https://slurm.schedmd.com/gres.html#GPU_Management)",
        'srun(1), Slurm 22.05: --gpus-per-task "Specify the number of GPUs required for the job on each task" (https://slurm.schedmd.com/srun.html)',
        "ground-truth.md: 'Other facts measured' row invalid device ordinal",
        "JAX, jax/_src/clusters/cluster.py:85-87: with no local_device_ids, `local_device_ids = [pid]` from `env.get_local_process_id()`; jax/_src/clusters/slurm_cluster.py:69-70: `int(os.environ['SLURM_LOCALID'])`; jax/_src/distributed.py:124-126: the ids become `jax_cuda_visible_devices` (jax-ml/jax at cec06d116c); jax-ml/jax#29669 (8 tasks per node on 4 GPUs: CUDA_ERROR_INVALID_DEVICE)",
        'srun(1), --gpu-bind: "none: Do not bind tasks to GPUs (turns off binding if --gpus-per-task is requested)" (https://slurm.schedmd.com/srun.html)',
      ],
    },
  },
  check(ctx) {
    checkJaxLocalDevice(ctx);
    const l = narrowest(ctx);
    if (!l) return;
    if (envWrites(ctx.model).some((w) => w.variable === "CUDA_VISIBLE_DEVICES")) return; // GPU004's business
    const k = l.gpusPerProcess;
    const visible = k === 1 ? "only cuda:0 exists" : `only cuda:0..cuda:${k - 1} exist`;
    const source = `${scriptNameOf(l)} line ${l.line + 1} starts this file with ${l.gpusFrom ?? "its GPU request"}`;
    for (const use of deviceUses(ctx.model)) {
      if (use.ordinal < k) continue;
      ctx.report({
        range: nodeRange(use.node),
        message: `${use.form} names device ${use.ordinal}, but each process of this file sees ${k} GPU${k === 1 ? "" : "s"} (${source}; Slurm lists only those in CUDA_VISIBLE_DEVICES, renumbered from 0 by CUDA): ${visible}, so this raises invalid device ordinal`,
      });
    }
    if (k !== 1 || l.launcher !== "srun" || (l.processesPerNode ?? 0) < 2) return;
    const sources = new Set(RANK_VARIABLES.flatMap((v) => envReadsOf(ctx.model, v)).map((r) => r.node.id));
    if (!sources.size) return;
    for (const call of ctx.model.nodesOfType("call")) {
      if (!call) continue;
      const q = calleePath(ctx.model, call);
      const { positional } = callArgs(call);
      let arg: SyntaxNode | undefined;
      if (q && SET_DEVICE_PATHS.includes(q)) arg = positional[0];
      else if (q === "torch.device" && positional.length === 2 && /^["']cuda["']$/.test(positional[0].text))
        arg = positional[1];
      if (!arg || !(flowsFrom(ctx.model, arg, sources) || viaParameter(ctx, arg, sources))) continue;
      ctx.report({
        range: nodeRange(call),
        message: `\`${call.text.split("\n")[0]}\` picks the device by the task's rank, but each task sees one GPU (${source}, ${l.processesPerNode} tasks per node): Slurm gives task 1 only its own GPU as cuda:0 (measured: task 1 sees CUDA_VISIBLE_DEVICES=1), so every task but the first fails with invalid device ordinal; use device 0`,
        fix: { title: "Use device 0", edits: [{ range: nodeRange(arg), newText: "0" }], safe: false },
      });
    }
  },
};
