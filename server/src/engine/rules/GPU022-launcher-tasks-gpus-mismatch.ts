import type { ManifestRule, ManifestRuleContext } from "../rule";
import type { ShellCommand, ShellWord } from "../manifests/shell";
import { importedModule, launchedScript, launchedScriptFacts } from "../launch/script";
import {
  expandedLaunch,
  launchOf,
  optionValue,
  resolveLiteral,
  type JobScriptFacts,
  type Launch,
} from "../manifests/jobscript";
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
 * copied to every visible GPU (`nn.DataParallel`, Keras' `multi_gpu_model`, TensorFlow's
 * `MirroredStrategy`), split across them (`device_map="auto"`, vLLM's `tensor_parallel_size`), or
 * processes started per GPU from inside (`mp.spawn`, `start_processes`), or Ray's actors.
 */
const SPREADS = [
  "DataParallel",
  "multi_gpu_model",
  "MirroredStrategy",
  "device_map",
  "tensor_parallel_size",
  "spawn",
  "start_processes",
  "ray",
];

/** Where Lightning decides between Slurm's processes and its own. */
const LIGHTNING_SLURM =
  'Lightning-AI/pytorch-lightning@7f0c3436cd3f src/lightning/fabric/plugins/environments/slurm.py:227-228 (`_is_srun_used`: `"SLURM_NTASKS" in os.environ and not _is_slurm_interactive_mode()`, job name `bash` or `interactive`), :58-59 (`creates_processes_externally` is True: no processes of its own), :134-135 (`world_size` is SLURM_NTASKS), :158-166 (`validate_settings`: `devices` other than SLURM_NTASKS_PER_NODE raises); src/lightning/pytorch/strategies/launchers/subprocess_script.py:99-102 (children started only where the environment does not create them)';

/** PyTorch Lightning's packages: under Slurm it takes its processes from Slurm's tasks ({@link lightningStartsItsOwn}). */
const LIGHTNING = new Set(["lightning", "pytorch_lightning", "lightning_fabric"]);

/**
 * Hugging Face's `Trainer` (and TRL's trainers, its subclasses) with their arguments: in a process
 * that is not one of several distributed ones it counts the visible GPUs and wraps the model in
 * `nn.DataParallel` when there are more than one ({@link HF_TRAINER_DOC}).
 */
const HF_TRAINER_DOC =
  "transformers 4.57.6 (PyPI wheel), training_args.py:2333-2344 (not distributed: `# if n_gpu is > 1 we'll use nn.DataParallel`, `self._n_gpu = torch.cuda.device_count()`) and trainer.py:2076-2078 (`if self.args.n_gpu > 1 ...: model = nn.DataParallel(model)`)";
const HF_TRAINER = /^(?:transformers|trl)(?:\.\w+)*\.\w*(?:Trainer|TrainingArguments)$/;

/** At most this many imports of the started script are followed into the project's own modules. */
const MAX_FOLLOWED_IMPORTS = 64;

/** What the Python program a launch starts shows: its file's imports and words, with those of the project modules it imports (one level). */
interface StartedProgram {
  imports: string[];
  words: Set<string>;
}

/**
 * The program `words` start (a literal `.py` path, found as launched scripts are: launch/script.ts)
 * with the project modules its imports name, one level deep (launch/script.ts `importedModule`);
 * null when its file cannot be read as Python (a `$VAR` path, a file not in the project).
 */
function startedProgram(
  ctx: ManifestRuleContext,
  words: readonly ShellWord[],
  literals: Map<string, string>,
): StartedProgram | null {
  const script = words.slice(1).find((w) => w.value.endsWith(".py"));
  const path = script ? resolveLiteral(script.value, literals) : null;
  const launched = path ? launchedScript(ctx.file, path, ctx.read) : null;
  const facts = launched ? launchedScriptFacts(launched.text) : null;
  if (!launched || !facts?.words) return null;
  const out: StartedProgram = { imports: [...facts.imports], words: new Set(facts.words) };
  for (const dotted of facts.imports.slice(0, MAX_FOLLOWED_IMPORTS)) {
    const mod = importedModule(launched.path, dotted, ctx.read);
    if (!mod || mod.text === launched.text) continue;
    const f = launchedScriptFacts(mod.text);
    out.imports.push(...f.imports);
    for (const w of f.words ?? []) out.words.add(w);
  }
  return out;
}

const topModule = (dotted: string): string => dotted.replace(/^\.+/, "").split(".")[0];

/**
 * Whether PyTorch Lightning, in the program the batch step starts, starts its own process per GPU:
 * it takes its processes from Slurm (and starts none) only where SLURM_NTASKS is set and the job is
 * not named `bash` or `interactive` ({@link LIGHTNING_SLURM}), and the batch step has SLURM_NTASKS
 * only when the job was given `--ntasks`/`-n` or `--ntasks-per-node` (measured:
 * test/fixtures/slurm/batch-ntasks/measured.md; an srun step always has it). A script that unsets
 * SLURM_NTASKS before the launch gets Lightning's own processes too.
 */
function lightningStartsItsOwn(job: JobScriptFacts): boolean {
  const named = (names: string[]) => job.directives.some((d) => d.options.some((o) => names.includes(o.name)));
  const unsets = job.commands.some(
    (c) => c.words[0]?.value === "unset" && c.words.some((w) => w.value === "SLURM_NTASKS"),
  );
  const jobName = job.directives.flatMap((d) => d.options).find((o) => o.name === "job-name")?.value;
  return (
    !named(["ntasks", "ntasks-per-node", "tasks-per-node", "ntasks-per-gpu"]) ||
    unsets ||
    jobName === "bash" ||
    jobName === "interactive"
  );
}

/**
 * Whether the started program may use the step's GPUs otherwise than one process on one GPU, or its
 * use cannot be seen: its file cannot be read; neither it nor a module it imports (one level) names
 * `cuda` (`torch.cuda`, `.cuda()`, `"cuda:0"`) or is a Lightning program, so no CUDA work is seen
 * (a CPU step such as data preparation or an upload, or GPU work deeper in the program); it names
 * one of {@link SPREADS}; it uses Hugging Face's Trainer ({@link HF_TRAINER}); or it is Lightning
 * started as the batch step of a job without a task count ({@link lightningStartsItsOwn}).
 */
function notOneGpu(ctx: ManifestRuleContext, l: Launch, job: JobScriptFacts): boolean {
  const p = startedProgram(ctx, l.words, job.literals);
  const lightning = !!p && p.imports.some((i) => LIGHTNING.has(topModule(i)));
  if (!p || !(lightning || p.words.has("cuda"))) return true;
  if (SPREADS.some((w) => p.words.has(w)) || p.imports.some((i) => HF_TRAINER.test(i))) return true;
  return !l.srun && lightning && lightningStartsItsOwn(job);
}

/**
 * Whether the command's GPUs are the script's own choice, or several such commands run at once:
 * it (`CUDA_VISIBLE_DEVICES=1 python x.py`) or the script sets CUDA_VISIBLE_DEVICES to other than a
 * literal list of at least `gpus` devices, or the command runs in the background (`python x.py
 * --gpu 0 &`: one process per GPU, started in turn).
 */
function gpusChosenByScript(ctx: ManifestRuleContext, c: ShellCommand, job: JobScriptFacts, gpus: number): boolean {
  const own = c.assignments.find((a) => a.name === "CUDA_VISIBLE_DEVICES");
  const value = own
    ? own.value
    : job.assigned.has("CUDA_VISIBLE_DEVICES")
      ? (job.literals.get("CUDA_VISIBLE_DEVICES") ?? "")
      : null;
  if (value !== null && !(/^\d+(,\d+)*$/.test(value) && value.split(",").length >= gpus)) return true;
  const text = ctx.manifest.src.text;
  let end = text.indexOf("\n", c.end);
  while (end > 0 && text[end - 1] === "\\") end = text.indexOf("\n", end + 1);
  const rest = text
    .slice(c.end, end < 0 ? text.length : end)
    .replace(/[0-9]*(?:>>|>&|<&|&>|>|<)\s*[^\s;&|]+/g, "")
    .trimStart();
  return rest.startsWith("&") && !rest.startsWith("&&");
}

/** The plain-Python finding's message: `perNode` processes per node on `gpus` GPUs per node; `jobTasks`: the job's tasks per node. */
function pythonMessage(l: Launch, perNode: number, gpus: number, jobTasks: number | null): string {
  const what = l.srun
    ? `srun starts ${perNode} Python process${perNode === 1 ? "" : "es"} per node`
    : "the batch script starts one Python process";
  const fix =
    !l.srun && jobTasks !== null && jobTasks >= gpus
      ? `the job has ${jobTasks} tasks per node, but the batch script runs this command once, not once per task: for a process per GPU, start it with srun (or a launcher such as torchrun)`
      : `a process per GPU needs --ntasks-per-node=${gpus} (or a launcher such as torchrun)`;
  return `${what} on ${gpus} GPUs per node: ${fix}; one process uses one GPU unless it spreads work itself`;
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
      what: "In a Slurm job script: `srun torchrun` (also `python -m torch.distributed.run`/`launch`, `tune run`) in a step with more than one task per node; torchrun's `--nproc_per_node` that differs from the GPUs per node the script asks for; and, in the preview set, `python`/`srun python` started with fewer tasks per node than GPUs, where the started program is seen to run on CUDA in one process.",
      follows:
        "The job script itself: the tasks and GPUs its `#SBATCH` lines ask for, each command's `srun` options, and its launches (`torchrun`, `python -m torch.distributed.run|launch`, `tune run`, `python file.py`), with a `$VAR` assigned once to a literal in the script, also a variable or once-assigned array among torchrun's options (`torchrun $DISTRIBUTED_ARGS train.py`, `\"${ARGS[@]}\"`) read as the words it holds; a variable there that is not known may hold a later `--nproc_per_node` (no count is compared), and `python $VAR file.py` with one may start torch's launcher (no preview check). For the preview check of a plain `python file.py`, the started program: its file (a literal path, beside the job script or up to three folders above it) and the project modules it imports, one level deep. It reports only where that code names `cuda` (`torch.cuda`, `.cuda()`, `\"cuda:0\"`) or is a PyTorch Lightning program, and stays silent where the file cannot be read, where it names `DataParallel`, Keras' `multi_gpu_model`, TensorFlow's `MirroredStrategy`, `device_map`, `tensor_parallel_size`, `spawn`, `start_processes` or `ray`, or uses Hugging Face's `Trainer` (one process that spreads its work over the GPUs it sees), where it is Lightning started as the batch step of a job with no `--ntasks`/`-n`/`--ntasks-per-node` (Lightning then starts a process per device itself), where the command or the script sets CUDA_VISIBLE_DEVICES to fewer devices than the job's (or to a value not written out), and where the command runs in the background (`python x.py --part 0 &`: several at once). Not followed: counts computed by the shell or set by the caller, options given to `sbatch` at submission, scripts it sources or runs, and the rest of the Python program (modules below the first level, classes loaded by name from a configuration).",
      why: "srun starts its program once per task. torchrun is itself a launcher that starts `--nproc_per_node` workers, so it needs exactly one task per node: with `--ntasks-per-node=4` each node runs four torchruns with four workers each, sixteen processes on four GPUs, and the four rendezvous clash. A `--nproc_per_node` larger than the GPUs the step sees makes workers pick device ordinals that do not exist (or share a GPU); a smaller one leaves GPUs idle. A plain Python program started with one task per node on a four-GPU allocation gets one process, which uses one GPU unless it spreads work itself; a command of the batch script runs once even when the job has a task per GPU (only srun starts one per task). PyTorch Lightning under Slurm takes its processes from Slurm's tasks where SLURM_NTASKS is set and starts none itself: with `--ntasks=1` one process trains on one GPU, and with `--ntasks-per-node=1` and `devices=4` it stops with a ValueError.",
      example:
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4   # one torchrun per GPU: wrong\n#SBATCH --gpus-per-node=4\n\nsrun torchrun --nnodes=2 --nproc_per_node=4 train.py   # GPU022\n",
      fix: "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=4\n\nsrun torchrun --nnodes=2 --nproc_per_node=4 train.py\n",
      whenNotToCare:
        "Only literal numbers are compared (a `$VAR` assigned once in the script to a literal is followed; `--nproc_per_node=$SLURM_GPUS_ON_NODE` is right by construction and not read). Commands inside `bash -c '...'` or a variable (`srun $CMD`) are not read. The plain-Python check is preview, below the default set's bar for lack of findings: measured on 2026-12-07 on the job scripts of 304 public repositories (228 with `#SBATCH` files among the code bases fetched for this study, research repositories, tutorials and frameworks among them, then 76 more as a held-out set), the check as it was gave 66 findings on the first set and 172 on the held-out one, of which 9 were true (the others: CPU steps such as data preparation and uploads, scripts not in the repository, DataParallel or Hugging Face's Trainer in the program, Lightning starting its own processes, one background process per GPU with its own CUDA_VISIBLE_DEVICES, a worker pool per device); as it is now it gives 9 findings on the first set, all true (single-GPU PyTorch programs, and Lightning in a job with `--ntasks=1`), and none on the held-out set. Nine findings are too few to put it in the default set (20 needed). A single process may also use several GPUs on purpose in ways not seen here (model parallelism deeper in the program, a worker pool per device).",
      references: [
        `${SRUN_DOC}: srun runs a parallel job, one copy of the program per task; --ntasks-per-node "Request that ntasks be invoked on each node"`,
        `${SBATCH_DOC}: --gpus-per-node, --gres=gpu:N are GPUs per node; --gpus-per-task with the task count`,
        "PyTorch, torchrun (Elastic Launch) (https://pytorch.org/docs/stable/elastic/run.html): --nproc-per-node is the number of workers per node, usually the number of GPUs",
        "Measured: test/fixtures/slurm/batch-ntasks/measured.md (Slurm 22.05.8: the batch step has SLURM_NTASKS only with --ntasks/-n or --ntasks-per-node; an srun step always has it)",
        LIGHTNING_SLURM,
        HF_TRAINER_DOC,
        'TensorFlow, tf.keras.utils.multi_gpu_model (r1.15, https://www.tensorflow.org/versions/r1.15/api_docs/python/tf/keras/utils/multi_gpu_model): "Replicates a model on different GPUs"; tf.distribute.MirroredStrategy (https://www.tensorflow.org/api_docs/python/tf/distribute/MirroredStrategy): "If no devices are specified in the constructor argument of the strategy then it will use all the available GPUs"',
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
      if (gpusChosenByScript(ctx, c, job, gpus) || notOneGpu(ctx, l, job)) continue;
      ctx.report({
        range: wordsRange(ctx, l.srun ? l.srun.word : l.words[0], l.words[0]),
        message: pythonMessage(l, perNode, gpus, req.tasksPerNode),
        preview: true,
        ...(req.where ? { related: [{ range: req.where.range, message: "the GPUs asked of Slurm" }] } : {}),
      });
    }
  },
};
