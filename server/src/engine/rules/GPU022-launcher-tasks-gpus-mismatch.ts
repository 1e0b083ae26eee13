import type { ManifestRule, ManifestRuleContext } from "../rule";
import type { ShellWord } from "../manifests/shell";
import { launchedScriptFacts, launchedScriptText } from "../launch/script";
import { expandedLaunch, launchOf, optionValue, resolveLiteral, type Launch } from "../manifests/jobscript";
import { jobScriptOf, wordsRange, SBATCH_DOC, SRUN_DOC } from "./shared/jobScript";

const int = (s: string | null | undefined): number | null =>
  s !== null && s !== undefined && /^[0-9]+$/.test(s) ? Number(s) : null;
const GPU_OPTIONS = ["gres", "gpus", "gpus-per-node", "gpus-per-task", "G"];

/**
 * Tasks per node of an srun step: its own `--ntasks-per-node`, or `--ntasks`/`--nodes`; the job's
 * when srun names neither. Null when unknown.
 */
function stepTasksPerNode(l: Launch, jobTasksPerNode: number | null): number | null {
  const o = l.srun!.options;
  const perNode = int(o.get("ntasks-per-node")?.value);
  if (perNode !== null) return perNode;
  const ntasks = int(o.get("ntasks")?.value);
  const nodes = int(o.get("nodes")?.value?.split("-")[0]);
  if (ntasks !== null) {
    if (ntasks === 1) return 1;
    if (nodes !== null && nodes > 0 && ntasks % nodes === 0) return ntasks / nodes;
    return null;
  }
  if (nodes !== null) return null;
  return jobTasksPerNode;
}

/**
 * Names whose use shows that one Python process spreads its work over the GPUs it sees: a model
 * copied to every visible GPU (`nn.DataParallel`), split across them (`device_map="auto"`, vLLM's
 * `tensor_parallel_size`), or processes started per GPU from inside (`mp.spawn`,
 * `start_processes`), or Ray's actors.
 */
const SPREADS = ["DataParallel", "device_map", "tensor_parallel_size", "spawn", "start_processes", "ray"];

/**
 * Whether the Python script `words` start (a literal `.py` path, found as launched scripts are:
 * launch/script.ts) names one of {@link SPREADS} in its code: one process per node is then what
 * it is written for. False when the script cannot be read.
 */
function spreadsItself(ctx: ManifestRuleContext, words: readonly ShellWord[], literals: Map<string, string>): boolean {
  const script = words.slice(1).find((w) => w.value.endsWith(".py"));
  const path = script ? resolveLiteral(script.value, literals) : null;
  const text = path ? launchedScriptText(ctx.file, path, ctx.read) : null;
  const named = text === null ? null : launchedScriptFacts(text).words;
  return !!named && SPREADS.some((w) => named.has(w));
}

/** GPU022: torchrun started once per task by srun, `--nproc_per_node` not the GPUs per node, or fewer Python tasks than GPUs. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU022",
    name: "launcher-tasks-gpus-mismatch",
    severity: "warning",
    fixable: false,
    // Reports on job scripts only (rules/shared/jobScript.ts `jobScriptOf`), never on a YAML manifest.
    trigger: () => false,
    docs: {
      what: "In a Slurm job script: `srun torchrun` (also `python -m torch.distributed.run`/`launch`, `tune run`) in a step with more than one task per node; torchrun's `--nproc_per_node` that differs from the GPUs per node the script asks for; and, in the preview set, `python`/`srun python` started with fewer tasks per node than GPUs.",
      follows:
        "The job script itself: the tasks and GPUs its `#SBATCH` lines ask for, each command's `srun` options, and its launches (`torchrun`, `python -m torch.distributed.run|launch`, `tune run`, `python file.py`), with a `$VAR` assigned once to a literal in the script, also a variable or once-assigned array among torchrun's options (`torchrun $DISTRIBUTED_ARGS train.py`, `\"${ARGS[@]}\"`) read as the words it holds; a variable there that is not known may hold a later `--nproc_per_node` (no count is compared), and `python $VAR file.py` with one may start torch's launcher (no preview check). For the preview check of a plain `python file.py`, the started script's code (a literal path, beside the job script or up to three folders above it): silent where it names `DataParallel`, `device_map`, `tensor_parallel_size`, `spawn`, `start_processes` or `ray` (one process that spreads its work over the GPUs it sees). Not followed: counts computed by the shell or set by the caller, options given to `sbatch` at submission, scripts it sources or runs, and the rest of the Python program (its other modules).",
      why: "srun starts its program once per task. torchrun is itself a launcher that starts `--nproc_per_node` workers, so it needs exactly one task per node: with `--ntasks-per-node=4` each node runs four torchruns with four workers each, sixteen processes on four GPUs, and the four rendezvous clash. A `--nproc_per_node` larger than the GPUs the step sees makes workers pick device ordinals that do not exist (or share a GPU); a smaller one leaves GPUs idle. A plain Python program started with one task per node on a four-GPU allocation gets one process, which uses one GPU unless it spreads work itself.",
      example:
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4   # one torchrun per GPU: wrong\n#SBATCH --gpus-per-node=4\n\nsrun torchrun --nnodes=2 --nproc_per_node=4 train.py   # GPU022\n",
      fix: "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=4\n\nsrun torchrun --nnodes=2 --nproc_per_node=4 train.py\n",
      whenNotToCare:
        "Only literal numbers are compared (a `$VAR` assigned once in the script to a literal is followed; `--nproc_per_node=$SLURM_GPUS_ON_NODE` is right by construction and not read). Commands inside `bash -c '...'` or a variable (`srun $CMD`) are not read. The plain-Python check is preview: a single process may use several GPUs on purpose (model parallelism, `device_map=\"auto\"`).",
      references: [
        `${SRUN_DOC}: srun runs a parallel job, one copy of the program per task; --ntasks-per-node "Request that ntasks be invoked on each node"`,
        `${SBATCH_DOC}: --gpus-per-node, --gres=gpu:N are GPUs per node; --gpus-per-task with the task count`,
        "PyTorch, torchrun (Elastic Launch) (https://pytorch.org/docs/stable/elastic/run.html): --nproc-per-node is the number of workers per node, usually the number of GPUs",
      ],
      language: "bash",
    },
  },
  checkManifest(ctx) {
    const job = jobScriptOf(ctx);
    if (!job) return;
    const req = job.request;
    for (const c of job.commands) {
      const l = expandedLaunch(launchOf(c), job);
      if (l.program === "other" || !l.words.length) continue;
      const srunGpus = l.srun ? GPU_OPTIONS.some((n) => l.srun!.options.has(n)) : false;
      if (l.program === "torchrun") {
        if (l.srun) {
          const perNode = stepTasksPerNode(l, req.tasksPerNode);
          if (perNode !== null && perNode > 1) {
            ctx.report({
              range: wordsRange(ctx, l.srun.word, l.words[0]),
              message: `srun starts ${perNode} tasks per node here and each runs its own torchrun, which starts its own workers: torchrun needs one task per node (--ntasks-per-node=1), it starts the per-GPU processes itself`,
              ...(req.where ? { related: [{ range: req.where.range, message: "the GPUs asked of Slurm" }] } : {}),
            });
          }
        }
        // Options not all known (`torchrun $ARGS x.py`): a later --nproc_per_node may be among them.
        const nproc = l.unknownOptions ? null : optionValue(l.words, ["--nproc_per_node", "--nproc-per-node"]);
        const n = nproc ? int(resolveLiteral(nproc.value, job.literals)) : null;
        // The GPUs one torchrun sees: under srun with --gpus-per-task, the task's; else the node's.
        const visible = srunGpus
          ? null
          : l.srun
            ? (req.gpusPerTask ?? req.gpusPerNode)
            : req.gpusPerTask === null
              ? req.gpusPerNode
              : null;
        if (nproc && n !== null && visible !== null && n !== visible) {
          ctx.report({
            range: wordsRange(ctx, nproc.start, nproc.end),
            message: `torchrun starts ${n} worker${n === 1 ? "" : "s"} per node but the job asks Slurm for ${visible} GPU${visible === 1 ? "" : "s"} per node: ${n > visible ? "workers beyond the GPUs pick device ordinals that do not exist or share a GPU" : `${visible - n} GPU${visible - n === 1 ? " per node stays" : "s per node stay"} idle`}; use --nproc_per_node=${visible} (or $SLURM_GPUS_ON_NODE)`,
            ...(req.where ? { related: [{ range: req.where.range, message: "the GPUs asked of Slurm" }] } : {}),
          });
        }
        continue;
      }
      // Plain python: a script (not -c, not -m some other module) with fewer tasks per node than GPUs.
      if (l.unknownOptions || l.words.some((w) => w.value === "-c" || w.value === "-m")) continue;
      if (!l.words.slice(1).some((w) => w.value.endsWith(".py"))) continue;
      const perNode = l.srun ? stepTasksPerNode(l, req.tasksPerNode) : 1;
      const gpus = srunGpus ? null : req.gpusPerTask !== null && l.srun ? null : req.gpusPerNode;
      if (perNode === null || gpus === null || gpus < 2 || perNode >= gpus) continue;
      if (spreadsItself(ctx, l.words, job.literals)) continue;
      ctx.report({
        range: wordsRange(ctx, l.srun ? l.srun.word : l.words[0], l.words[0]),
        message: `${l.srun ? `srun starts ${perNode} Python process${perNode === 1 ? "" : "es"} per node` : "the batch script starts one Python process"} on ${gpus} GPUs per node: a process per GPU needs --ntasks-per-node=${gpus} (or a launcher such as torchrun); one process uses one GPU unless it spreads work itself`,
        preview: true,
        ...(req.where ? { related: [{ range: req.where.range, message: "the GPUs asked of Slurm" }] } : {}),
      });
    }
  },
};
