import type { ManifestRule, ManifestRuleContext } from "../rule";
import type { ShellCommand, ShellWord } from "../manifests/shell";
import { importedModule, launchedScript, launchedScriptFacts } from "../launch/script";
import {
  expandedLaunch,
  lastDirectiveOption,
  launcherWords,
  launchOf,
  optionValue,
  resolveLiteral,
  stepTasksPerNode,
  NTASKS_MEASURED,
  type JobScriptFacts,
  type Launch,
  type SbatchOption,
} from "../manifests/jobscript";
import { jobScriptOf, wordsRange, SBATCH_DOC, SRUN_DOC } from "./shared/jobScript";
import { readAccelerateConfig } from "../launch/accelerateConfig";
import { lightningPinsIn, lightningProgram, type LightningCall } from "../launch/lightningTrainer";
import { rangesOverlap } from "../initCatalogue";
import { basename, dirname, join } from "node:path";

const int = (s: string | null | undefined): number | null =>
  s !== null && s !== undefined && /^[0-9]+$/.test(s) ? Number(s) : null;
const GPU_OPTIONS = ["gres", "gpus", "gpus-per-node", "gpus-per-task", "G"];

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

/**
 * Imports whose function starts a process per GPU from inside the program: detectron2's
 * `launch(main, num_gpus_per_machine, ...)` ({@link DETECTRON2_LAUNCH_DOC}), the tools/train_net.py
 * way of training on several GPUs (`python tools/train_net.py --num-gpus 4`).
 */
const STARTS_PROCESSES = /^detectron2\.engine(?:\.launch)?\.launch$/;
const DETECTRON2_LAUNCH_DOC =
  'facebookresearch/detectron2@02b5c4e295e9 detectron2/engine/launch.py:27-71 (`launch(main_func, num_gpus_per_machine, ...)`: "It will spawn child processes (defined by ``num_gpus_per_machine``) on each machine", `mp.start_processes(..., nprocs=num_gpus_per_machine, ...)`), detectron2/engine/__init__.py:3 (`from .launch import *`), tools/train_net.py:27,156 (`launch(main, args.num_gpus, ...)`)';

/**
 * JAX's packages: one JAX process drives every GPU it sees (single-controller JAX: `jax.devices()`,
 * sharding, `pmap`), and a process per host is its usual multi-GPU form ({@link JAX_DOC}); how a
 * JAX program places its work is not followed here.
 */
const JAX = new Set(["jax", "flax", "jaxlib"]);
const JAX_DOC =
  'JAX, Introduction to multi-controller JAX (https://docs.jax.dev/en/latest/multi_process.html): "Run multiple Python processes ... We can run one (or more) process per host machine", after single-controller JAX, where one process addresses all its devices (Distributed arrays and automatic parallelization)';

/** At most this many imports of the started script are followed into the project's own modules. */
const MAX_FOLLOWED_IMPORTS = 64;

/**
 * The project module `dotted` names, looked for beside the started script, then in the folders
 * above it (three at most: `python llava/eval/run.py` imports `llava.model`, a package at the
 * project's root, installed or put on the path by the project), the first found; a relative import
 * only beside it.
 */
function projectModule(
  script: string,
  dotted: string,
  read: ManifestRuleContext["read"],
): ReturnType<typeof importedModule> {
  let dir = dirname(script);
  for (let k = 0; k < (dotted.startsWith(".") ? 1 : 4); k++, dir = dirname(dir)) {
    const mod = importedModule(join(dir, basename(script)), dotted, read);
    if (mod) return mod;
  }
  return null;
}

/** What the Python program a launch starts shows: its file's imports and words, with those of the project modules it imports (one level). */
interface StartedProgram {
  imports: string[];
  words: Set<string>;
  /** It, or a module it imports, loops over the visible GPUs putting work on each (python/deviceLoops.ts). */
  loopsOverDevices: boolean;
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
  const out: StartedProgram = {
    imports: [...facts.imports],
    words: new Set(facts.words),
    loopsOverDevices: facts.loopsOverDevices,
  };
  for (const dotted of facts.imports.slice(0, MAX_FOLLOWED_IMPORTS)) {
    const mod = projectModule(launched.path, dotted, ctx.read);
    if (!mod || mod.text === launched.text) continue;
    const f = launchedScriptFacts(mod.text);
    out.imports.push(...f.imports);
    for (const w of f.words ?? []) out.words.add(w);
    if (f.loopsOverDevices) out.loopsOverDevices = true;
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
 * one of {@link SPREADS}; it uses Hugging Face's Trainer ({@link HF_TRAINER}) or detectron2's
 * launch ({@link STARTS_PROCESSES}), or is a JAX program ({@link JAX}); it loops over the
 * visible GPUs putting work on each (python/deviceLoops.ts: Numba's `cuda.gpus`, CuPy's
 * `Device(i)` or torch's devices in `range(device_count())`); or it is Lightning
 * started as the batch step of a job without a task count ({@link lightningStartsItsOwn}).
 */
function notOneGpu(ctx: ManifestRuleContext, l: Launch, job: JobScriptFacts): boolean {
  const p = startedProgram(ctx, l.words, job.literals);
  const lightning = !!p && p.imports.some((i) => LIGHTNING.has(topModule(i)));
  if (!p || !(lightning || p.words.has("cuda"))) return true;
  if (
    SPREADS.some((w) => p.words.has(w)) ||
    p.imports.some((i) => HF_TRAINER.test(i) || STARTS_PROCESSES.test(i) || JAX.has(topModule(i))) ||
    p.loopsOverDevices
  )
    return true;
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

/** The torchrun documentation's deployment note, in the source that writes it. */
const TORCHRUN_DEPLOY_DOC =
  'torch/distributed/run.py (Debian python3-torch 1.13.1; the same text is the torchrun page, https://pytorch.org/docs/stable/elastic/run.html):254 "Multi-node multi-worker: Start the launcher with the same arguments on all the nodes participating in training", :406 `--nnodes` "Number of nodes, or the range of nodes in form <minimum_nodes>:<maximum_nodes>", :424 `--rdzv_backend` default "static"; torch/distributed/elastic/rendezvous/dynamic_rendezvous.py:1213-1215 (c10d) `join_timeout` "The total time, in seconds, within which the rendezvous is expected to complete. Defaults to 600 seconds"';
/** How accelerate launches on several machines. */
const ACCELERATE_MULTINODE_DOC =
  "huggingface/accelerate@16cb6eb8 src/accelerate/commands/launch.py:1384-1400 (`launch_command`: `--multi_gpu`, `--use_fsdp`, `--use_megatron_lm`, or the config's `distributed_type`, run `multi_gpu_launcher`, :998-1030, which calls torchrun's `distrib_run.run` on this machine), :1054 (`deepspeed_launcher`: with `num_machines > 1` and a `deepspeed_multinode_launcher` other than `standard`, the default `pdsh` among them, DeepSpeed's own runner starts the other machines; with `standard` torchrun runs here as above), :498-501 (`--deepspeed_multinode_launcher` \"If unspecified, will default to `pdsh`\"); examples/slurm/submit_multinode.sh starts `accelerate launch --num_machines $SLURM_NNODES` with `srun`";
/** Measured: a two-node launch started on one machine. */
const MULTINODE_MEASURED =
  "Measured (torch 1.13.1, CPU, gloo, 2026-12-07): `python3 -m torch.distributed.run --nnodes 2 --nproc_per_node 1 --node_rank 0 --master_addr 127.0.0.1 w.py` started no worker within 45 s (killed by timeout, static rendezvous); with `--rdzv_backend c10d --rdzv_conf join_timeout=20` it stopped after 24 s with `torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError`, no worker started";

/** A word of another command that may start the launcher on the job's other nodes (srun, ssh, pdsh, MPI). */
const REACHES_NODES =
  /(?:^|[\s;&|(`'"/])(?:srun|ssh|pdsh|clush|pssh|mpirun|mpiexec|orterun|pbsdsh|jsrun)(?=$|[\s;&|)`'"])/;

/** `$SLURM_NNODES`, `${SLURM_JOB_NUM_NODES}`: the job's node count in the batch step (sbatch(1), OUTPUT ENVIRONMENT VARIABLES). */
const JOB_NODES_VAR = /^\$(?:\{(?:SLURM_NNODES|SLURM_JOB_NUM_NODES)\}|SLURM_NNODES|SLURM_JOB_NUM_NODES)$/;

/** The least node count a launcher's option states (`2`, torchrun's `2:4`, `$SLURM_NNODES` as the job's); null when not a literal. */
function leastNodes(value: string, job: JobScriptFacts): number | null {
  if (JOB_NODES_VAR.test(value.trim())) return job.request.nodes;
  const lit = resolveLiteral(value, job.literals);
  const m = lit === null ? null : /^([0-9]{1,5})(?::[0-9]{1,5})?$/.exec(lit.trim());
  return m ? Number(m[1]) : null;
}

/** A launcher that expects several machines: its name for messages, the words to report, the count and the option that says so. */
interface MachinesLaunch {
  name: string;
  first: ShellWord;
  last: ShellWord;
  machines: number;
  from: string;
}

/** The index of an accelerate launch's first own option in `words` (`accelerate launch`, `accelerate-launch`, `python -m accelerate.commands.launch`); -1 when not one. */
function accelerateFrom(words: readonly ShellWord[]): number {
  const first = (words[0]?.value ?? "").replace(/^.*\//, "");
  if (first === "accelerate" && words[1]?.value === "launch") return 2;
  if (first === "accelerate-launch") return 1;
  if (/^python[0-9.]*$/.test(first) && words[1]?.value === "-m" && words[2]?.value === "accelerate.commands.launch")
    return 3;
  return -1;
}

/**
 * An `accelerate launch` on several machines that starts torchrun on this machine only ({@link
 * ACCELERATE_MULTINODE_DOC}): `--multi_gpu`, `--use_fsdp`, `--use_megatron_lm`, or DeepSpeed with
 * the `standard` multi-node launcher, given as flags or by the config file it names (read from the
 * workspace); null where the kind of launch is not known (no flag and no config file: the default
 * config of the machine that runs it decides), where DeepSpeed's own runner starts the other
 * machines, or where the options are not all known.
 */
function accelerateMachines(ctx: ManifestRuleContext, words: ShellWord[], job: JobScriptFacts): MachinesLaunch | null {
  const from = accelerateFrom(words);
  if (from < 0) return null;
  const { words: w, program, unknown } = launcherWords(words, from, job);
  if (unknown) return null;
  const opts = w.slice(from, program);
  const flag = (name: string) => opts.some((o) => o.value === name || o.value === name.replace(/_/g, "-"));
  const value = (name: string) => optionValue(opts, [name, name.replace(/_/g, "-")]);
  const file = value("--config_file");
  const cfg = file ? readAccelerateConfig(ctx.file, resolveLiteral(file.value, job.literals) ?? "$", ctx.read) : null;
  if (file && !cfg) return null;
  const flags = ["--multi_gpu", "--use_fsdp", "--use_megatron_lm", "--use_deepspeed", "--cpu", "--tpu"].filter(flag);
  const type = flags.length
    ? flags.length === 1 && flags[0] !== "--cpu" && flags[0] !== "--tpu"
      ? flags[0] === "--use_deepspeed"
        ? "DEEPSPEED"
        : "MULTI_GPU"
      : null
    : (cfg?.distributedType ?? null);
  const dsLauncher = value("--deepspeed_multinode_launcher")?.value ?? cfg?.multinodeLauncher ?? "pdsh";
  const torchrunHere =
    type === "MULTI_GPU" ||
    type === "FSDP" ||
    type === "MEGATRON_LM" ||
    (type === "DEEPSPEED" && dsLauncher === "standard");
  if (!torchrunHere) return null;
  const cli = value("--num_machines");
  const machines = cli ? leastNodes(cli.value, job) : (cfg?.numMachines ?? null);
  if (machines === null || machines < 2) return null;
  const name = w
    .slice(0, from)
    .map((x) => x.value.replace(/^.*\//, ""))
    .join(" ");
  const where = cli ? `--num_machines ${cli.value}` : `num_machines: ${machines} in ${file!.value}`;
  return { name, first: words[0], last: words[from - 1], machines, from: where };
}

/** A torchrun (`python -m torch.distributed.run|launch`) whose `--nnodes` asks for at least two nodes; null with `--standalone` or options not all known. */
function torchrunMachines(l: Launch, job: JobScriptFacts): MachinesLaunch | null {
  if (l.program !== "torchrun" || l.unknownOptions) return null;
  const script = l.words.findIndex((w, i) => i > 0 && /\.py$/.test(w.value));
  const own = script < 0 ? l.words : l.words.slice(0, script);
  if (own.some((w) => w.value === "--standalone")) return null;
  const n = optionValue(own, ["--nnodes"]);
  const machines = n ? leastNodes(n.value, job) : null;
  if (n === null || machines === null || machines < 2) return null;
  const m = l.words[1]?.value === "-m" ? 2 : 0;
  const name = m ? `python -m ${l.words[2].value}` : "torchrun";
  return { name, first: l.words[0], last: l.words[m], machines, from: `--nnodes ${n.value}` };
}

/**
 * A launcher that expects several machines, started as a command of the batch script (not under
 * srun) of a job of several nodes: Slurm runs the batch script once, on the first node ({@link
 * SBATCH_DOC}), so the other machines never join. Silent where another command of the script may
 * start it elsewhere (srun, ssh, pdsh, MPI: {@link REACHES_NODES}) or runs a command held in a
 * variable (`$CMD`, `eval`).
 */
function checkBatchStepMachines(ctx: ManifestRuleContext, job: JobScriptFacts, c: ShellCommand, l: Launch): void {
  const nodes = job.request.nodes;
  if (l.srun || nodes === null || nodes < 2) return;
  const found = l.program === "torchrun" ? torchrunMachines(l, job) : accelerateMachines(ctx, l.words, job);
  if (!found) return;
  const text = ctx.manifest.src.text;
  const elsewhere = job.commands.some(
    (o) =>
      o !== c &&
      (REACHES_NODES.test(text.slice(o.start, o.end)) ||
        o.words[0]?.value.startsWith("$") ||
        o.words[0]?.value === "eval"),
  );
  if (elsewhere) return;
  const nodesOption = lastDirectiveOption(job.directives, "nodes");
  const fix = found.name.startsWith("accelerate")
    ? `\`srun --ntasks-per-node=1 bash -c '${found.name} --machine_rank $SLURM_NODEID ...'\`, each machine with its own rank`
    : `\`srun --ntasks-per-node=1 ${found.name} --rdzv-backend c10d --rdzv-endpoint $MASTER_ADDR:29500 ...\`, or \`--node_rank $SLURM_NODEID\` inside \`bash -c '...'\``;
  const others = found.machines === 2 ? "the other machine, which never joins" : "the other machines, which never join";
  ctx.report({
    range: wordsRange(ctx, found.first, found.last),
    severity: "error",
    message: `${found.name} expects ${found.machines} machines (${found.from}), but it is a command of the batch script, which Slurm runs once, on the first of the job's ${nodes} nodes: only that node starts workers, and the rendezvous waits for ${others}, until it times out; start it once per node with srun (${fix})`,
    ...(nodesOption ? { related: [{ range: nodesOption.range, message: "the job's nodes" }] } : {}),
  });
}

/**
 * The job's `--ntasks-per-node` where its `--ntasks` overrides it for a step that takes the job's
 * tasks (srun without a count of its own): at least `gpus`, while the step starts fewer tasks.
 */
function overriddenPerNode(l: Launch, job: JobScriptFacts, gpus: number): SbatchOption | null {
  if (!l.srun || l.srun.options.has("ntasks") || l.srun.options.has("ntasks-per-node")) return null;
  const o =
    lastDirectiveOption(job.directives, "ntasks-per-node") ?? lastDirectiveOption(job.directives, "tasks-per-node");
  const k = Number(o?.value);
  return o && job.request.ntasks !== null && /^[0-9]+$/.test(o.value ?? "") && k >= gpus ? o : null;
}

/** The plain-Python finding's message: `perNode` processes per node on `gpus` GPUs per node. */
function pythonMessage(l: Launch, perNode: number, gpus: number, job: JobScriptFacts): string {
  const jobTasks = job.request.tasksPerNode;
  const what = l.srun
    ? `srun starts ${perNode} Python process${perNode === 1 ? "" : "es"} per node`
    : "the batch script starts one Python process";
  const overridden = overriddenPerNode(l, job, gpus);
  const fix = overridden
    ? `the job's --ntasks=${job.request.ntasks} takes precedence over its --${overridden.name}=${overridden.value}, which is then only a maximum per node (sbatch(1)): for a process per GPU, drop --ntasks or make it the GPUs of all the nodes`
    : !l.srun && jobTasks !== null && jobTasks >= gpus
      ? `the job has ${jobTasks} tasks per node, but the batch script runs this command once, not once per task: for a process per GPU, start it with srun (or a launcher such as torchrun)`
      : `a process per GPU needs --ntasks-per-node=${gpus} (or a launcher such as torchrun)`;
  return `${what} on ${gpus} GPUs per node: ${fix}; one process uses one GPU unless it spreads work itself`;
}

/** Where Lightning checks its `devices` and `num_nodes` against Slurm's, and from which release. */
const LIGHTNING_VALIDATE_DOC =
  'Lightning-AI/pytorch-lightning@7f0c3436cd3f src/lightning/fabric/plugins/environments/slurm.py:157-172 (`validate_settings`: outside interactive mode, `SLURM_NTASKS_PER_NODE` other than `devices` raises `ValueError("You set `devices=N` in Lightning, but the number of tasks per node configured in SLURM `--ntasks-per-node=K` does not match. HINT: Set `devices=K`.")`, and `SLURM_NNODES` other than `num_nodes` likewise), :101-113 (`detect`: `_is_srun_used`, :227-228, SLURM_NTASKS set and the job not named `bash` or `interactive`); src/lightning/pytorch/trainer/connectors/accelerator_connector.py:386-398 (SLURMEnvironment chosen when detected, unless a cluster environment is given among the plugins or TorchElastic\'s variables are set), :409-422 (no strategy given: `ddp` for more than one node or device); src/lightning/pytorch/strategies/ddp.py:145-150 and src/lightning/fabric/strategies/ddp.py:111-116 (`start_method` `popen`, the `ddp` strategy: `_SubprocessScriptLauncher`), src/lightning/pytorch/strategies/launchers/subprocess_script.py:99 and src/lightning/fabric/strategies/launchers/subprocess_script.py:102 (its `launch`, run by `trainer.fit` and `fabric.launch()`, calls `validate_settings` first); added in 2.1.0 (commit c95dbac2e87c, #18292: "Added validation of user input for `devices` and `num_nodes` when running with `SLURM`"); 1.8.0 to 2.0.x take the world size from SLURM_NTASKS without the check (SLURMEnvironment chosen whenever SLURM_NTASKS is set: src/pytorch_lightning/trainer/connectors/accelerator_connector.py at 1.8.0:560-572, commit 619e76f22d, #14300 "Remove silent behavior when `num_slurm_tasks` does not correspond to number of processes in Trainer"), while 1.7.x and earlier start their own processes where SLURM_NTASKS differs from the devices times the nodes (`_is_slurm_managing_tasks`, src/pytorch_lightning/trainer/connectors/accelerator_connector.py at 1.7.0:559,568-575; pytorch_lightning/trainer/connectors/accelerator_connector.py at 1.5.0:1022-1029)';

/** Where Lightning refuses more devices than the visible GPUs, when the Trainer or Fabric is built. */
const DEVICE_PARSER =
  "Lightning-AI/pytorch-lightning@7f0c3436cd3f src/lightning/fabric/utilities/device_parser.py:49-103 `_parse_gpu_ids` (an int becomes `list(range(n))`, :155) and :116-139 `_sanitize_gpu_ids`";

/** What Lightning does in the one task of a `--ntasks=1` step whose devices are the task's GPUs. */
const LIGHTNING_ONE_TASK_DOC =
  'Lightning-AI/pytorch-lightning@7f0c3436cd3f src/lightning/fabric/plugins/environments/slurm.py:134-135 (`world_size` is SLURM_NTASKS), :138-139 (`set_world_size` ignored), :211-224 (`_validate_srun_variables` raises only for SLURM_NTASKS above 1 without SLURM_NTASKS_PER_NODE), :157-172 (`validate_settings` passes where SLURM_NTASKS_PER_NODE equals `devices` or is not set); src/lightning/pytorch/trainer/connectors/accelerator_connector.py:368-384 (`devices="auto"`: `auto_device_count()`, every visible GPU, src/lightning/pytorch/accelerators/cuda.py:98-100), :400-422 (`ddp` for several devices); src/lightning/pytorch/strategies/ddp.py:118-120 (`root_device` is `parallel_devices[local_rank]`, SLURM_LOCALID 0), :132-138 (`num_processes` is the devices, `distributed_sampler_kwargs` `num_replicas=num_nodes * num_processes`); src/lightning/pytorch/trainer/connectors/data_connector.py:169-173, 200, 243 (a loader without a DistributedSampler gets one with those kwargs); src/lightning/fabric/strategies/ddp.py:104 and src/lightning/fabric/fabric.py:468 (Fabric\'s `setup_dataloaders` likewise); the same from 1.8.0 (SLURMEnvironment whenever SLURM_NTASKS is set, #14300) to 2.6.x. Measured (verify/frameworks/lightning_slurm_probe.py, verify/results-lightning-slurm-cpu.json; lightning 2.6.6, CPU, Slurm variables of a `--ntasks=1 --ntasks-per-node=2` task, `Trainer(devices=2)`): `trainer.num_devices` 2, world size 1, SLURMEnvironment, DDPStrategy, DistributedSampler with 2 replicas, 32 of 64 samples trained in the epoch; the same without SLURM_NTASKS_PER_NODE';

/** Project files whose Lightning pin is read, in the started file's folder and the job script's, and up to three folders above each. */
const PIN_FILES = [
  "requirements.txt",
  "setup.py",
  "setup.cfg",
  "pyproject.toml",
  "environment.yml",
  "environment.yaml",
];

/**
 * Whether a Lightning pin of the project admits no release at or after `since` (the newest admitted
 * release is what an install gets), or cannot be read: then what runs is not settled here.
 */
function pinnedBefore(ctx: ManifestRuleContext, dirs: readonly string[], since: string): boolean {
  const seen = new Set<string>();
  for (const start of dirs) {
    let dir = start;
    for (let k = 0; k < 4; k++, dir = dirname(dir)) {
      for (const name of PIN_FILES) {
        const path = join(dir, name);
        if (seen.has(path)) continue;
        seen.add(path);
        const text = ctx.read(path, 1024 * 1024, true);
        if (text === null) continue;
        for (const spec of lightningPinsIn(name, text)) {
          try {
            if (!rangesOverlap(spec, `>=${since}`)) return true;
          } catch {
            return true;
          }
        }
      }
    }
  }
  return false;
}

/** The srun options that give a step a task or node layout of its own, or another environment: the job's SLURM_NTASKS_PER_NODE and SLURM_NNODES may then not be the step's. */
const STEP_LAYOUT = ["ntasks", "n", "ntasks-per-node", "tasks-per-node", "nodes", "N", "ntasks-per-gpu", "export"];

/** The Lightning settings of the one Trainer/Fabric call the launch's file makes, with the job's, where Lightning takes its processes from Slurm; null otherwise. */
interface LightningLaunch {
  call: LightningCall;
  /** The job's `--ntasks-per-node` (SLURM_NTASKS_PER_NODE), and its count; null when not given (the count also when not a literal). */
  perNode: SbatchOption | null;
  k: number | null;
  /** The folders whose project files' Lightning pins are read ({@link pinnedBefore}). */
  pinDirs: string[];
}

/**
 * {@link LightningLaunch} of a `python file.py` launch: SLURMEnvironment detected (the job names a
 * task count, is not named `bash` or `interactive`, and neither the script nor the program sets
 * what Lightning detects), an srun step without a task or node layout of its own, one
 * `Trainer`/`Fabric` call (Fabric with `launch()`); null otherwise.
 */
function lightningLaunch(
  ctx: ManifestRuleContext,
  job: JobScriptFacts,
  c: ShellCommand,
  l: Launch,
): LightningLaunch | null {
  if (l.program !== "python" || l.unknownOptions || l.words.some((w) => w.value === "-c" || w.value === "-m"))
    return null;
  if (l.srun && STEP_LAYOUT.some((o) => l.srun!.options.has(o))) return null;
  const perNode =
    lastDirectiveOption(job.directives, "ntasks-per-node") ?? lastDirectiveOption(job.directives, "tasks-per-node");
  const k = int(perNode?.value);
  if (lightningStartsItsOwn(job)) return null;
  // The script sets Slurm's or torch's launch variables, or Lightning's defaults (`PL_TRAINER_DEVICES`,
  // Fabric's `LT_DEVICES`), itself: what Lightning detects or is given is not settled here.
  const own = /^(?:SLURM_\w+|LOCAL_RANK|GROUP_RANK|LOCAL_WORLD_SIZE|RANK|PL_TRAINER_\w+|LT_\w+)$/;
  if ([...job.assigned].some((v) => own.test(v)) || c.assignments.some((x) => own.test(x.name))) return null;
  if (job.commands.some((x) => x.words[0]?.value === "unset" && x.words.some((w) => w.value.startsWith("SLURM_"))))
    return null;
  const at = l.words.findIndex((w, i) => i > 0 && w.value.endsWith(".py"));
  const path = at > 0 ? resolveLiteral(l.words[at].value, job.literals) : null;
  const launched = path ? launchedScript(ctx.file, path, ctx.read) : null;
  if (!launched) return null;
  const argv = l.words.slice(at + 1).map((w) => resolveLiteral(w.value, job.literals));
  const program = lightningProgram(launched.text, argv.includes(null) ? null : (argv as string[]));
  // A cluster environment of its own, Slurm's variables changed or Lightning's defaults named by the program.
  if (program.ownSettings) return null;
  const calls = program.calls;
  if (calls.length !== 1 || (calls[0].kind === "Fabric" && !program.launches)) return null;
  if (c.assignments.some((a) => a.name === "CUDA_VISIBLE_DEVICES") && calls[0].devices === "all") return null;
  const pinDirs = [dirname(launched.path), ...(ctx.file ? [dirname(ctx.file)] : [])];
  return { call: calls[0], perNode: perNode ?? null, k, pinDirs };
}

/** The devices a call gets: its count, or for `"auto"`/`-1`/not given with the GPU (or default) accelerator the job's GPUs per node; null when not known. */
function lightningDevices(call: LightningCall, job: JobScriptFacts): number | null {
  if (call.devices !== "all") return call.devices;
  const gpuAccelerator = call.accelerator === "gpu" || call.accelerator === "cuda" || call.accelerator === "auto";
  const visible = job.request.gpusPerTask !== null ? null : job.request.gpusPerNode;
  return gpuAccelerator ? visible : null;
}

/** A Lightning finding: its message and the job option it follows. */
interface LightningFinding {
  message: string;
  related: { option: SbatchOption; message: string };
}

/**
 * Lightning's Slurm check (2.1 and later, {@link LIGHTNING_VALIDATE_DOC}): the one `Trainer`/`Fabric`
 * of the launched file given `devices` other than the job's `--ntasks-per-node` (SLURM_NTASKS_PER_NODE,
 * test/fixtures/slurm/ntasks-per-node/measured.md), or `num_nodes` other than its `--nodes`
 * (SLURM_NNODES), where the DDP strategy's launcher runs the check; null otherwise.
 */
function lightningMismatch(
  found: LightningLaunch,
  job: JobScriptFacts,
  l: Launch,
  pinned: () => boolean,
): LightningFinding | null {
  const { call, perNode, k } = found;
  if (!perNode || k === null) return null;
  const gpuAccelerator = call.accelerator === "gpu" || call.accelerator === "cuda";
  const visible = job.request.gpusPerTask !== null ? null : job.request.gpusPerNode;
  const d = lightningDevices(call, job);
  const nodesOption = lastDirectiveOption(job.directives, "nodes");
  const m = int(nodesOption?.value);
  // The check runs where the strategy starts processes as scripts: DDP, named or chosen for several devices or nodes.
  const checks = (devices: number) =>
    call.strategy === "popen" || (call.strategy === "auto" && (devices > 1 || (call.numNodes ?? 1) > 1));
  const lead = `under Slurm Lightning runs one process per Slurm task and starts none itself, and from release 2.1 it checks the job before training and stops with ValueError`;
  const srunHint = l.srun
    ? ""
    : ", and start the program with srun (the batch script runs this command once, not once per task)";
  const tasks = { option: perNode, message: "the tasks per node Lightning compares with devices" };
  let out: LightningFinding | null = null;
  if (
    d !== null &&
    d !== k &&
    visible !== null &&
    d > visible &&
    call.devices !== "all" &&
    call.accelerator !== "cpu"
  ) {
    // More devices than the task sees: the Trainer/Fabric refuses them when it is built, before the Slurm check.
    const ids = (n: number) => `[${Array.from({ length: n }, (_, i) => i).join(", ")}]`;
    out = {
      message: `this program's Lightning ${call.kind} gets devices=${d} but each task sees the job's ${visible} GPUs per node (Slurm sets CUDA_VISIBLE_DEVICES to the job's GPUs): Lightning stops when it builds the ${call.kind} with MisconfigurationException ("You requested gpu: ${ids(d)} But your machine only has: ${ids(visible)}", ${DEVICE_PARSER}), before it compares devices with the job's --ntasks-per-node=${k}; ${k <= visible ? `give it devices=${k}` : `ask for one task per GPU (--ntasks-per-node=${visible}) and give it devices=${visible}`}${srunHint}`,
      related: tasks,
    };
  } else if (d !== null && d !== k && checks(d)) {
    const written = call.devices === "all" ? `devices "auto" (here the job's ${d} GPUs per node)` : `devices=${d}`;
    out = {
      message: `this program's Lightning ${call.kind} gets ${written} but the job asks for --ntasks-per-node=${k}: ${lead}("You set \`devices=${d}\` in Lightning, but the number of tasks per node configured in SLURM \`--ntasks-per-node=${k}\` does not match"); ask for --ntasks-per-node=${d}${srunHint}`,
      related: tasks,
    };
  } else if (d === null && gpuAccelerator && call.strategy === "popen" && visible !== null && k > visible) {
    out = {
      message: `this program's Lightning ${call.kind} (accelerator="${call.accelerator}") gets at most the job's ${visible} GPUs per node as devices but the job asks for --ntasks-per-node=${k}: ${lead}("You set \`devices=N\` in Lightning, but the number of tasks per node configured in SLURM \`--ntasks-per-node=${k}\` does not match"); ask for one task per device (at most --ntasks-per-node=${visible})${srunHint}`,
      related: tasks,
    };
  } else if (d !== null && d === k && m !== null && call.numNodes !== null && call.numNodes !== m && checks(d)) {
    out = {
      message: `this program's Lightning ${call.kind} gets num_nodes=${call.numNodes}${call.numNodes === 1 ? " (the default)" : ""} but the job asks for --nodes=${m}: ${lead}("You set \`num_nodes=${call.numNodes}\` in Lightning, but the number of nodes configured in SLURM \`--nodes=${m}\` does not match"); give it num_nodes=${m}${srunHint}`,
      related: { option: nodesOption!, message: "the nodes Lightning compares with num_nodes" },
    };
  }
  return out && !pinned() ? out : null;
}

/**
 * Lightning in the one task of a `--ntasks=1` job ({@link LIGHTNING_ONE_TASK_DOC}): an srun step
 * without a layout of its own, or the batch step (SLURM_NTASKS=1 there too, with SLURM_PROCID,
 * SLURM_LOCALID and SLURM_NODEID: sbatch(1)), the job's `--ntasks=1` over `--ntasks-per-node`
 * (then only a maximum), one node, and a `Trainer`
 * or `Fabric` whose `devices` are two or more of the task's GPUs, equal to `--ntasks-per-node` where
 * that is given (else {@link lightningMismatch}), with the DDP strategy: Lightning (1.8 and later)
 * passes its Slurm check and trains in one process, world size 1, on the first of its devices.
 * Silent where srun names GPUs of its own, the job gives GPUs per task, or the script chooses the
 * visible GPUs ({@link gpusChosenByScript}); null otherwise.
 */
function lightningOneTask(
  ctx: ManifestRuleContext,
  found: LightningLaunch,
  job: JobScriptFacts,
  c: ShellCommand,
  l: Launch,
): LightningFinding | null {
  const { call, perNode, k } = found;
  const req = job.request;
  const nodes = lastDirectiveOption(job.directives, "nodes");
  if (req.ntasks !== 1 || (nodes && int(nodes.value) !== 1) || call.numNodes !== 1) return null;
  if (GPU_OPTIONS.some((n) => l.srun?.options.has(n)) || req.gpusPerTask !== null || req.gpusPerNode === null)
    return null;
  const d = lightningDevices(call, job);
  if (d === null || d < 2 || d > req.gpusPerNode || (perNode && k !== d)) return null;
  if (call.accelerator !== "auto" && call.accelerator !== "gpu" && call.accelerator !== "cuda") return null;
  if (call.strategy !== "popen" && call.strategy !== "auto") return null;
  if (gpusChosenByScript(ctx, c, job, req.gpusPerNode)) return null;
  const ntasks = lastDirectiveOption(job.directives, "ntasks")!;
  const written = call.devices === "all" ? `devices "auto" (here the job's ${d} GPUs per node)` : `devices=${d}`;
  const why = perNode
    ? `the job's --ntasks=1 takes precedence over its --${perNode.name}=${k}, then only a maximum per node`
    : "the job's --ntasks=1";
  const idle = req.gpusPerNode - 1;
  const fix =
    (perNode
      ? `drop --ntasks=1 (keep --${perNode.name}=${d})`
      : `ask for --ntasks-per-node=${d} instead of --ntasks=1`) + (l.srun ? "" : " and start the program with srun");
  const what = l.srun
    ? `srun starts one task here (${why})`
    : `the batch script runs this command once, as the job's one task (--ntasks=1: SLURM_NTASKS=1${perNode ? `, over its --${perNode.name}=${k}` : ""})`;
  return {
    message: `${what}, and under Slurm Lightning runs one process per Slurm task and starts none itself: this program's Lightning ${call.kind} gets ${written}, passes Lightning's Slurm check, and trains in that one process (world size 1) on one GPU, the first of its ${d} devices, leaving ${idle} of the job's ${req.gpusPerNode} GPUs idle; the DistributedSampler Lightning adds to a loader without one (the Trainer's default, Fabric's setup_dataloaders) is made for ${d} processes, so that process trains on ${d === 2 ? "half" : `1/${d}`} of each epoch's data; for a process per GPU ${fix}`,
    related: { option: ntasks, message: "the one task Slurm starts" },
  };
}

/** The Lightning checks of a `python file.py` launch ({@link lightningMismatch}, {@link lightningOneTask}); true when one reported. */
function checkLightningSettings(ctx: ManifestRuleContext, job: JobScriptFacts, c: ShellCommand, l: Launch): boolean {
  const found = lightningLaunch(ctx, job, c, l);
  if (!found) return false;
  const finding =
    lightningMismatch(found, job, l, () => pinnedBefore(ctx, found.pinDirs, "2.1.0")) ??
    (pinnedBefore(ctx, found.pinDirs, "1.8.0") ? null : lightningOneTask(ctx, found, job, c, l));
  if (!finding) return false;
  const req = job.request;
  ctx.report({
    range: wordsRange(ctx, l.srun ? l.srun.word : l.words[0], l.words[0]),
    message: finding.message,
    severity: "error",
    related: [
      { range: finding.related.option.range, message: finding.related.message },
      ...(req.where ? [{ range: req.where.range, message: "the GPUs asked of Slurm" }] : []),
    ],
  });
  return true;
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
      what: "In a Slurm job script: `srun torchrun` (also `python -m torch.distributed.run`/`launch`, `tune run`) in a step with more than one task per node; torchrun's `--nproc_per_node` that differs from the GPUs per node the script asks for; a launcher that expects several machines (`torchrun --nnodes 2`, `accelerate launch --num_machines 2`) started as a command of the batch script, without srun, in a job of several nodes (an error); a PyTorch Lightning program (`Trainer`, or `Fabric` with `launch()`) whose `devices` differ from the job's `--ntasks-per-node`, or whose `num_nodes` differs from its `--nodes`, which Lightning 2.1 and later refuse under Slurm before training (an error); a Lightning program started as the one task of a `--ntasks=1` job (by srun, or as a command of the batch script) whose `devices` are two or more of the node's GPUs, which Lightning 1.8 and later train in that one process on one GPU with a sampler made for all the devices (an error); and, in the preview set, a plain `python` line of the batch script (one process, whatever task count the job asks for) or `srun python` with fewer tasks per node than GPUs, where the started program is seen to run on CUDA in one process.",
      follows:
        "The job script itself: the tasks and GPUs its `#SBATCH` lines ask for (the tasks per node: `--ntasks` spread over the nodes where it is given, `--ntasks-per-node` being then only a maximum; no count where the nodes would get different ones), each command's `srun` options (its `--ntasks-per-node` is not read where the job's task count overrides it), and its launches (`torchrun`, `python -m torch.distributed.run|launch`, `tune run`, `python file.py`), with a `$VAR` assigned once to a literal in the script, also a variable or once-assigned array among torchrun's options (`torchrun $DISTRIBUTED_ARGS train.py`, `\"${ARGS[@]}\"`) read as the words it holds; a variable there that is not known may hold a later `--nproc_per_node` (no count is compared), and `python $VAR file.py` with one may start torch's launcher (no preview check). For a launcher in the batch script: the job's `#SBATCH --nodes` (its least count), torchrun's `--nnodes` (its least count; `--standalone` is one node) and accelerate's `--num_machines` (else the `num_machines` of the config file named by `--config_file`), each a literal, a variable assigned once to one, or `$SLURM_NNODES`/`$SLURM_JOB_NUM_NODES` (the job's count); for accelerate also how it launches: `--multi_gpu`, `--use_fsdp`, `--use_megatron_lm`, or DeepSpeed with `deepspeed_multinode_launcher: standard` (flags, else the config's `distributed_type`) start torchrun on the machine that runs the command, while DeepSpeed's default `pdsh` (and its other multi-node launchers) starts the other machines itself and is not reported, nor is an accelerate launch with no flag and no config file (the default config of the machine that runs it decides). It is silent where another command of the script may start the launcher on the other nodes: srun, ssh, pdsh, clush, pssh, mpirun, mpiexec, pbsdsh or jsrun anywhere in it (also inside `bash -c` or `$(...)`), or a command held in a variable (`$CMD`, `eval`). For the preview check of a plain `python file.py`, the started program: its file (a literal path, beside the job script or up to three folders above it) and the project modules it imports, one level deep (looked for beside the file, then in up to three folders above it, as a package at the project's root that `python llava/eval/run.py` imports; a relative import only beside it). It reports only where that code names `cuda` (`torch.cuda`, `.cuda()`, `\"cuda:0\"`) or is a PyTorch Lightning program, and stays silent where the file cannot be read, where it names `DataParallel`, Keras' `multi_gpu_model`, TensorFlow's `MirroredStrategy`, `device_map`, `tensor_parallel_size`, `spawn`, `start_processes` or `ray`, or uses Hugging Face's `Trainer` (one process that spreads its work over the GPUs it sees) or detectron2's `launch` (`python tools/train_net.py --num-gpus 4`: a process per GPU started from inside), or is a JAX program (`import jax`: one process drives the GPUs it sees; how it places work is not followed), or loops over the visible GPUs putting work on each (Numba's `for dev in cuda.gpus: with dev:` or `cuda.select_device(i)`, CuPy's `cupy.cuda.Device(i)`, torch's `.to(f\"cuda:{i}\")`, `.to(i)` or `set_device(i)` in a loop over `range(torch.cuda.device_count())` or `range(cupy.cuda.runtime.getDeviceCount())`; a loop that only asks about each GPU does not count), where it is Lightning started as the batch step of a job with no `--ntasks`/`-n`/`--ntasks-per-node` (Lightning then starts a process per device itself), where the command or the script sets CUDA_VISIBLE_DEVICES to fewer devices than the job's (or to a value not written out), and where the command runs in the background (`python x.py --part 0 &`: several at once). For the Lightning check: the job's `#SBATCH --ntasks-per-node` (Slurm puts it in SLURM_NTASKS_PER_NODE, in the batch step and in srun steps without task or node options of their own) and `--nodes` (SLURM_NNODES), each a literal, and the started file's one `Trainer(...)` (`pytorch_lightning`, `lightning`, `lightning.pytorch`) or `Fabric(...)` (`lightning.fabric`, `lightning_fabric`, with a `.launch()` call) with its `devices` (an integer, a list of indices, `\"0,1\"`; `\"auto\"`, `-1` or not given: the job's GPUs per node, for the `gpu`, `cuda` or default accelerator), `num_nodes` (1 when not given), `accelerator` and `strategy`, each written in the call or read from an argparse option of the file (`devices=args.gpus` with `--gpus 4` on the launch line, else the option's default). The check is Lightning's, so it is reported only where Lightning runs it: SLURMEnvironment detected (a task count in the job, the job not named `bash` or `interactive`, no cluster environment of the program's own (a `...Environment(...)` call, or a class so named or derived from one), no `plugins=`, no Slurm variable or Lightning default such as `PL_TRAINER_DEVICES` set by the script, no `SLURM_*` key of `os.environ` (or one not written out) assigned, deleted or popped by the program, and no `PL_TRAINER_*` or `LT_*` name in its code; the program is read from its syntax tree, so a comment does not count), the `ddp` strategy (given, or chosen by default for more than one device or node; FSDP, `ddp_spawn` and the like do not run it), and no Lightning pin of the project (`requirements.txt`, `setup.py`, `setup.cfg`, `pyproject.toml`, `environment.yml` beside the started file or the job script, or up to three folders above) that admits only releases before 2.1. Where `devices` is not known, a job with more tasks per node than GPUs is reported only for the GPU accelerator with the `ddp` strategy named (the devices cannot exceed the visible GPUs). For the one-task check: the job's `--ntasks`/`-n` of 1 (SLURM_NTASKS=1 in the batch step and in an srun step without task or node options of its own, `--ntasks-per-node` then being only a maximum), one node (`--nodes` not given or 1, `num_nodes` 1), the node's GPUs from `--gres`/`--gpus-per-node` (silent with `--gpus-per-task`, GPU options of srun's own, CUDA_VISIBLE_DEVICES set by the script or the command, or a command run in the background), the Trainer or Fabric read and detected as for the check above with the `ddp` strategy (given, or chosen for several devices), the `gpu`, `cuda` or default accelerator, `devices` from 2 to the node's GPUs and equal to `--ntasks-per-node` where that is given (else the check above reports), and no Lightning pin of the project that admits only releases before 1.8. Not followed: counts computed by the shell or set by the caller, options given to `sbatch` at submission, scripts it sources or runs, and the rest of the Python program (modules below the first level, classes loaded by name from a configuration).",
      why: 'srun starts its program once per task. torchrun is itself a launcher that starts `--nproc_per_node` workers, so it needs exactly one task per node: with `--ntasks-per-node=4` each node runs four torchruns with four workers each, sixteen processes on four GPUs, and the four rendezvous clash. A `--nproc_per_node` larger than the GPUs the step sees makes workers pick device ordinals that do not exist (or share a GPU); a smaller one leaves GPUs idle. A plain Python program started with one task per node on a four-GPU allocation gets one process, which uses one GPU unless it spreads work itself; a command of the batch script runs once even when the job has a task per GPU (only srun starts one per task). Likewise Slurm runs the batch script itself once, on the first node of the allocation (sbatch(1): "Slurm runs a single copy of the batch script on the first node in the set of allocated nodes"), while a multi-machine torchrun must be started "with the same arguments on all the nodes participating in training", and accelerate\'s multi-GPU, FSDP and Megatron-LM launches (and DeepSpeed with the `standard` multi-node launcher) run torchrun on the machine that runs the command: `torchrun --nnodes 2` or `accelerate launch --num_machines 2` in the batch script of a two-node job starts workers on the first node only, and the rendezvous waits for the second machine until it times out (measured: no worker started within 45 s with the static rendezvous; the c10d rendezvous stops with RendezvousTimeoutError after its join timeout, 600 s by default), leaving the other node\'s GPUs idle for the wait. PyTorch Lightning under Slurm takes its processes from Slurm\'s tasks where SLURM_NTASKS is set and starts none itself: with `--ntasks=1` one process trains on one GPU. From release 2.1 its DDP launcher checks the job before training and stops with a ValueError ("You set devices=4 in Lightning, but the number of tasks per node configured in SLURM --ntasks-per-node=1 does not match. HINT: Set devices=1.", quoted without its backticks) (likewise `num_nodes` against `--nodes`); releases 1.8 to 2.0 ran without the check, with the world size taken from Slurm\'s tasks (fewer processes than devices, or ranks waiting for processes that never start), while 1.7 and earlier started processes of their own where SLURM_NTASKS differed from the devices times the nodes. With `--ntasks=1` Slurm starts one task whatever `--ntasks-per-node` says, and from 1.8 Lightning takes that task as its whole world (world size SLURM_NTASKS, 1): where `devices` equals SLURM_NTASKS_PER_NODE, or that variable is not set, its check passes, and it trains in that one process on the first of its devices, the other GPUs idle, while the DistributedSampler it adds to a loader is made for all its devices (`num_nodes` times `devices` replicas), so the process also trains on only its share of each epoch\'s data (measured with Lightning 2.6.6 under the Slurm variables of such a task: `Trainer(devices=2)` reported 2 devices, world size 1, and trained on 32 of 64 samples in the epoch).',
      example:
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4   # one torchrun per GPU: wrong\n#SBATCH --gpus-per-node=4\n\nsrun torchrun --nnodes=2 --nproc_per_node=4 train.py   # GPU022\n",
      fix: "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=4\n\nsrun torchrun --nnodes=2 --nproc_per_node=4 train.py\n",
      whenNotToCare:
        "Only literal numbers are compared (a `$VAR` assigned once in the script to a literal is followed; `--nproc_per_node=$SLURM_GPUS_ON_NODE` is right by construction and not read). A batch script that another script runs on every node itself (`srun job.sh` from a wrapper, not `sbatch job.sh`) runs a multi-machine launcher on each node and is right; its `#SBATCH` lines are then not read by Slurm, so such a file is better written without them. Peers started in a way not seen here (a script the batch script sources or runs, a second job on the other nodes) also make the multi-machine launch work. Commands inside `bash -c '...'` or a variable (`srun $CMD`) are not read. The Lightning check follows only the started file's own `Trainer`/`Fabric` call (not one in a module it imports, in a configuration such as Hydra's or LightningCLI's, or built from `**kwargs`), and reads a pin only in the files named above: a project that runs Lightning before 2.1 without pinning it there gets a message about an error its release does not raise, though its job is still wrong for Lightning (one process per Slurm task). The one-task check's sampler claim holds where Lightning adds the sampler (the Trainer's default `use_distributed_sampler=True`, Fabric's `setup_dataloaders`): a loader with a DistributedSampler of its own, or `use_distributed_sampler=False`, sees all its data, on one GPU all the same. The plain-Python check is preview, below the default set's bar for lack of findings: measured on 2026-12-07 on the job scripts of 304 public repositories (228 with `#SBATCH` files among the code bases fetched for this study, research repositories, tutorials and frameworks among them, then 76 more as a held-out set), the check as it was gave 66 findings on the first set and 172 on the held-out one, of which 9 were true (the others: CPU steps such as data preparation and uploads, scripts not in the repository, DataParallel or Hugging Face's Trainer in the program, Lightning starting its own processes, one background process per GPU with its own CUDA_VISIBLE_DEVICES, a worker pool per device); as it is now it gives 9 findings on the first set, all true (single-GPU PyTorch programs, and Lightning in a job with `--ntasks=1`), and none on the held-out set. Nine findings are too few to put it in the default set (20 needed). A second held-out set, the job scripts of 125 more repositories (2026-12-07), gave 13 findings: 9 true (single-GPU programs and Lightning with `--ntasks=1` on 2 to 9 GPUs) and 4 false (detectron2's `launch`, which starts a process per GPU, twice; LLaVA's `device_map=\"auto\"` in a package at the project's root, not read then): 69 %. With the silences those called for (and one for JAX programs, met once packages at the project's root were read), it gives 17 findings on the 429 repositories, all true, but that is on the sample it was corrected on, and still fewer than 20. A single process may also use several GPUs on purpose in ways not seen here (model parallelism deeper in the program, a worker pool per device).",
      references: [
        `${SRUN_DOC}: srun runs a parallel job, one copy of the program per task; --ntasks-per-node "Request that ntasks be invoked on each node"`,
        `${SBATCH_DOC}: --gpus-per-node, --gres=gpu:N are GPUs per node; --gpus-per-task with the task count`,
        "PyTorch, torchrun (Elastic Launch) (https://pytorch.org/docs/stable/elastic/run.html): --nproc-per-node is the number of workers per node, usually the number of GPUs",
        `${SBATCH_DOC} and ${SRUN_DOC}, --ntasks-per-node: "If used with the --ntasks option, the --ntasks option will take precedence and the --ntasks-per-node will be treated as a maximum count of tasks per node"`,
        `Measured: ${NTASKS_MEASURED} (Slurm 22.05.8, two nodes: \`--nodes=1 --ntasks=1 --ntasks-per-node=2\` starts one task; srun spreads --ntasks over all the job's nodes, \`--ntasks=3\` on two nodes as two tasks and one; a step of a job with a task count ignores an srun --ntasks-per-node that does not match it)`,
        "Measured: test/fixtures/slurm/batch-ntasks/measured.md (Slurm 22.05.8: the batch step has SLURM_NTASKS only with --ntasks/-n or --ntasks-per-node; an srun step always has it)",
        LIGHTNING_SLURM,
        LIGHTNING_VALIDATE_DOC,
        LIGHTNING_ONE_TASK_DOC,
        `${DEVICE_PARSER}: devices beyond the visible GPUs raise MisconfigurationException ("You requested gpu: ... But your machine only has: ...") when the Trainer or Fabric is built`,
        `${SBATCH_DOC}, OUTPUT ENVIRONMENT VARIABLES (set "in the environment of the batch script"): SLURM_LOCALID, SLURM_NODEID, SLURM_PROCID, and SLURM_NTASKS_PER_NODE "Only set if the --ntasks-per-node option is specified" (the same section in SchedMD/slurm@000729e63fd9 doc/man/man1/sbatch.1)`,
        'CSCfi/pytorch-ddp-examples@f04fb5a4 README.md and run-lightning-gpu4.sh (2023-05-24, "Update Lightning examples to work with newer Lightning versions"): the Lightning example job of `--ntasks=1` and four GPUs (`srun python3 mnist_lightning_ddp.py --gpus=4`) had the note "it uses only 1 GPU even though more are requested" with the newer modules, and was changed to `--ntasks-per-node=4`',
        HF_TRAINER_DOC,
        DETECTRON2_LAUNCH_DOC,
        JAX_DOC,
        `${SBATCH_DOC}, DESCRIPTION: "When the job allocation is finally granted for the batch script, Slurm runs a single copy of the batch script on the first node in the set of allocated nodes"`,
        TORCHRUN_DEPLOY_DOC,
        ACCELERATE_MULTINODE_DOC,
        MULTINODE_MEASURED,
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
      checkBatchStepMachines(ctx, job, c, l);
      if (l.program === "other" || !l.words.length) continue;
      const srunGpus = l.srun ? GPU_OPTIONS.some((n) => l.srun!.options.has(n)) : false;
      if (l.program === "torchrun") {
        if (l.srun) {
          const perNode = stepTasksPerNode(l.srun.options, req);
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
      if (checkLightningSettings(ctx, job, c, l)) continue;
      // Plain python: a script (not -c, not -m some other module) with fewer tasks per node than GPUs.
      if (l.unknownOptions || l.words.some((w) => w.value === "-c" || w.value === "-m")) continue;
      if (!l.words.slice(1).some((w) => w.value.endsWith(".py"))) continue;
      const perNode = l.srun ? stepTasksPerNode(l.srun.options, req) : 1;
      const gpus = srunGpus ? null : req.gpusPerTask !== null && l.srun ? null : req.gpusPerNode;
      if (perNode === null || gpus === null || gpus < 2 || perNode >= gpus) continue;
      if (gpusChosenByScript(ctx, c, job, gpus) || notOneGpu(ctx, l, job)) continue;
      ctx.report({
        range: wordsRange(ctx, l.srun ? l.srun.word : l.words[0], l.words[0]),
        message: pythonMessage(l, perNode, gpus, job),
        preview: true,
        ...(req.where ? { related: [{ range: req.where.range, message: "the GPUs asked of Slurm" }] } : {}),
      });
    }
  },
};
