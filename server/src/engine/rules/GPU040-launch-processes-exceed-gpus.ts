import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { ManifestRule, ManifestRuleContext } from "../rule";
import type { Range } from "../types";
import { expandsVariable, type ShellCommand, type ShellWord } from "../manifests/shell";
import type { JobScriptFacts } from "../manifests/jobscript";
import { buildManifestModel, type ManifestModel } from "../manifests/model";
import { childShellScript, workingDirectory, type ChildShellScript } from "../launch/child";
import { resolveLiteral } from "../manifests/jobscript";
import { isMap, pairOf, scalarText, valueOf } from "../manifests/yaml";
import { parseVisibleDevices } from "../visibleDevices";
import { LAUNCHER_NAME, parseLaunchLine, wholeNumber, type LaunchLine, type OptionValue } from "../launch/commandLine";
import {
  launchesOf,
  literalsWithSourced,
  visibleForCommand,
  type FoundLaunch,
  type VisibleSetting,
} from "../launch/sources";
import { mentionsLauncher } from "../manifests/prefilter";
import { launchedScript, launchedScriptFacts, optionsWithDest, SCRIPT_DIR } from "../launch/script";
import {
  deepspeedLocalIds,
  hostfileProblems,
  parseDeepspeedHostfile,
  parseHostFilter,
  type Hostfile,
} from "../launch/hostfile";
import { rangesOverlap } from "../initCatalogue";
import { readAccelerateConfig } from "../launch/accelerateConfig";

const TORCHRUN_DOC =
  'PyTorch, torch.distributed launch utility (https://pytorch.org/docs/stable/distributed.html#launch-utility): "If used for GPU training, this number needs to be less or equal to the number of GPUs on the current system (nproc_per_node), and each process will be operating on a single GPU from GPU 0 to GPU (nproc_per_node - 1)"; torchrun (https://pytorch.org/docs/stable/elastic/run.html) takes the same --nproc-per-node and sets LOCAL_RANK';
const ACCELERATE_DOC =
  'Accelerate, The Command Line (https://huggingface.co/docs/accelerate/package_reference/cli): `--num_processes` "The total number of processes to be launched in parallel", `--gpu_ids` "What GPUs (by id) should be used for training on this machine as a comma-separated list"; accelerate/utils/launch.py writes `--gpu_ids` into CUDA_VISIBLE_DEVICES and passes num_processes // num_machines to torchrun as nproc_per_node';
const ACCELERATE_DEFAULT_DOC =
  'Accelerate, src/accelerate/commands/launch.py (huggingface/accelerate, read at 16cb6eb8), `_validate_launch_command`: `if args.config_file is not None or os.path.isfile(default_config_file) and not args.cpu:` takes the config\'s values, `else: if args.num_processes is None:` ... `args.num_processes = torch.cuda.device_count()` (with the warning "`--num_processes` was set to a value of ..." and "More than one GPU was found, enabling multi-GPU training"); src/accelerate/commands/config/config_args.py: `hf_cache_home = os.path.expanduser(os.environ.get("HF_HOME", os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "huggingface")))`, `default_yaml_config_file = os.path.join(cache_dir, "default_config.yaml")`';
const DEEPSPEED_DOC =
  'DeepSpeed, deepspeed/launcher/runner.py (microsoft/DeepSpeed, read at 38327e07, `main`): with CUDA_VISIBLE_DEVICES set and no hostfile, `if len(args.include) or len(args.exclude) or args.num_nodes > 1 or args.num_gpus > 0:` it prints "... but ignoring it because one or several of --include/--exclude/--num_gpus/--num_nodes cl args were used. If you want to use CUDA_VISIBLE_DEVICES don\'t pass any of these arguments to deepspeed.", else it sets `args.include = f"localhost:{visible_devices}"`; either way `del os.environ[visible_devices_env]`; then `--num_gpus N` gives each host `list(range(args.num_gpus))`; `--num_gpus` with `--include`/`--exclude` raises "Cannot specify num_nodes/gpus with include/exclude"; an `--include` slot the node lacks raises "No slot \'...\' specified on host \'localhost\'"; DeepSpeed Getting Started, Resource Configuration (https://www.deepspeed.ai/getting-started/#resource-configuration-single-node)';
const DEEPSPEED_HOSTFILE_DOC =
  'DeepSpeed, deepspeedai/DeepSpeed@edaa7221 deepspeed/launcher/runner.py: :53-59 `-H`/`--hostfile` (default /job/hostfile), :61-84 `-i`/`--include`, `-e`/`--exclude` (`NODE_SPEC[@NODE_SPEC ...]`, `NODE_SPEC=NAME[:SLOT[,SLOT ...]]`), :230-240 `fetch_hostfile` (`os.path.isfile(hostfile_path)`, else "Unable to find hostfile, will proceed with training with local resources only."), :243-272 `_parse_hostfile` (`^(\\S+)\\s+slots=(\\d+)`, blank and `#` lines skipped, "Hostfile contains multiple entries for ..."), :310-388 `parse_resource_filter` (:346 and :363 "Hostname \'...\' not found in hostfile", :349 "No slot \'...\' specified on host \'...\'"), :391-398 `parse_inclusion_exclusion` (`node_configs[hostname] if hostname in node_configs else list(range(slots))`); before 5cbbff40 (#6530, first in v0.15.2) `active_resources[hostname] = list(range(slots))` for every host (v0.14.5 runner.py:355-359, v0.3.0 runner.py:235-238); before 8c56c25d (#2626, first in v0.8.0) a hostfile line was split into exactly two words (v0.6.0 runner.py:168-170); deepspeedai/DeepSpeed#3625 (`work1 slots=2` with `--include=work1:2,3`: "No slot 2 specificied on host work1")';
const VLLM_DOC =
  'vLLM: vllm-project/vllm@99d7eb5d vllm/engine/arg_utils.py `add_cli_args`: `"--tensor-parallel-size", "-tp"`, `"--pipeline-parallel-size", "-pp"`, `"--data-parallel-size", "-dp"`, `--data-parallel-size-local`/`-dpl`, `--data-parallel-rank`, `--data-parallel-start-rank`, `--data-parallel-address`, `--data-parallel-backend`; vllm/utils/argparse_utils.py@c836a6fe FlexibleArgumentParser "allows both underscore and dash in names" and puts a `--config` file\'s options before the command line\'s; vllm/config/parallel.py@840e7972 `ParallelConfig.__post_init__`: `world_size = pipeline_parallel_size * tensor_parallel_size * prefill_context_parallel_size`, and with no `distributed_executor_backend`, `nnodes` 1 and `cuda_device_count_stateless() < self.world_size` it raises `World size (...) is larger than the number of available GPUs (...) in this node` (earlier releases: `backend = "ray"`, or "Unable to load Ray"); docs/serving/data_parallel_deployment.md@01e4fce0: "each DP engine owns a number of per-GPU worker processes equal to the configured TP size", `--data-parallel-size=4 --tensor-parallel-size=2` "would require 8 GPUs"; vllm/v1/engine/utils.py@5f25cfbe `get_device_indices`: replica `local_dp_rank` takes the visible devices `local_dp_rank * world_size` onward; docker/Dockerfile, stage vllm-openai: `ENTRYPOINT ["vllm", "serve"]` (dead20ba), `ENTRYPOINT ["python3", "-m", "vllm.entrypoints.openai.api_server"]` (0000977e); vllm-project/vllm#5790, #25113, #22677 (GPU035\'s reports: a tensor-parallel size above the visible GPUs)';
const GROUND_TRUTH =
  "ground-truth.md: `cuda:1` with one visible GPU raises 'invalid device ordinal'; docs/ground-truth.md (GPU011): two torchrun ranks on one GPU make NCCL fail ('invalid usage')";

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** `0,1,3` → 3 ids; null for `all`, an empty value or anything else. */
function idList(v: string | null): number[] | null {
  if (v === null) return null;
  const t = v.trim();
  return /^[0-9]+(?:\s*,\s*[0-9]+)*$/.test(t) ? t.split(",").map((x) => Number(x.trim())) : null;
}

/** The number of GPUs a CUDA_VISIBLE_DEVICES value leaves: its entries when they are clean indices or UUIDs; null otherwise (GPU003 reports the rest). */
function visibleCount(value: string): number | null {
  const p = parseVisibleDevices(value);
  if (p.stop || p.duplicate || p.kept.length === 0 || value.trim() === "") return null;
  return p.kept.length;
}

/** The processes a launch starts per node and the words that say so. */
interface Processes {
  n: number;
  range: Range;
  sameLine: boolean;
  text: string;
  /** vLLM's server: its world size (tensor-parallel x pipeline-parallel) and data-parallel replicas. */
  vllm?: { world: number; dp: number };
}

/** GPU040: a launcher starts more processes per node than GPUs are visible to them. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU040",
    name: "launch-processes-exceed-gpus",
    severity: "warning",
    fixable: false,
    // A launcher in a container's command (compose, Kubernetes; vLLM's server and image hold `vllm`), or an accelerate config (num_processes with gpu_ids).
    trigger: (t) => mentionsLauncher(t) || (t.includes("num_processes") && t.includes("gpu_ids")),
    docs: {
      what: "Reads launch command lines (`torchrun`, `python -m torch.distributed.run|launch`, `accelerate launch`, `deepspeed`, also behind `srun`, `env VAR=...`, `VAR=... cmd`, `nohup`, and `sh -c '...'` in a container's command) in shell scripts, Slurm job scripts, Dockerfile `CMD`/`ENTRYPOINT`, compose `command`/`entrypoint` and Kubernetes `command`/`args`, and reports a launch that starts more processes per node than GPUs are visible to it. Also vLLM's server (`vllm serve MODEL ...`, `python -m vllm.entrypoints.openai.api_server ...`, and a compose `command`, Kubernetes `args` or the words after the image of a shell script's `docker run --gpus ...` for a container on vLLM's image `vllm/vllm-openai[:tag]`, whose ENTRYPOINT runs the server, when no compose `entrypoint`, Kubernetes `command` or `--entrypoint` replaces it), which needs one GPU per worker: `--tensor-parallel-size`/`-tp` x `--pipeline-parallel-size`/`-pp` x `--data-parallel-size`/`-dp` (each 1 by default; `_` for `-` accepted), compared with the same visible GPUs. Visible GPUs are, in this order: the CUDA_VISIBLE_DEVICES that the launched script itself writes, its only write of the variable, either a literal at its top level before anything starts CUDA (`os.environ[\"CUDA_VISIBLE_DEVICES\"] = \"1\"`) or from one of its options given on the line (`train.py --device 0,1` with `os.environ[\"CUDA_VISIBLE_DEVICES\"] = args.device` and `add_argument(\"--device\", ...)`; shell and job scripts, the script read beside the launching file or up to three folders above it), the CUDA_VISIBLE_DEVICES in force (an inline prefix, an earlier `export` in the script, the image's `ENV`, the service's `environment`, the container's `env`; accelerate's `--gpu_ids`), else the container's GPU request (compose `count`/`device_ids`, Kubernetes `nvidia.com/gpu` limit), else the Slurm allocation (accelerate and deepspeed; torchrun's is GPU022's), else, for a plain shell script, the machine's GPU count (`--gpus`, `--inventory`, `[tool.gpu-pilot] gpus`/`inventory`, the editor's nvidia-smi). An `accelerate launch` with no `--num_processes`, no `--config_file` and no default accelerate config on the machine running the linter starts one process per GPU its launcher sees (the CUDA_VISIBLE_DEVICES in force, else, for a plain shell script, the machine's GPU count): it is reported when the launched script's own write leaves fewer GPUs to each process. Also: an accelerate config YAML whose `num_processes` per machine exceeds its `gpu_ids`; deepspeed's `--num_gpus` with `--include`; a deepspeed `--include` id the container or machine lacks; a deepspeed `--include`/`--exclude` that the launch's `--hostfile` refuses (a host it does not list; an `--exclude` slot at or beyond the host's `slots=`; an `--include` slot there where the project pins deepspeed below 0.15.2, which takes a host's slots as its GPUs 0..slots-1); and CUDA_VISIBLE_DEVICES set for a `deepspeed --num_gpus/--include/--exclude` launch, which DeepSpeed ignores, unless the GPUs it uses instead are the first ones the value lists (`CUDA_VISIBLE_DEVICES=0,1` with `--num_gpus 2` changes nothing) or may be (`--num_gpus $N` with a value that starts with GPU 0, `--include` ids that are not literal). The value may be the caller's: a script that runs a project shell script as a new shell (`CUDA_VISIBLE_DEVICES=4,5,6,7 bash single_node.sh`, or after an `export`) whose deepspeed launch drops it is reported on that line of the caller, where the value is written and can be moved, with the child's deepspeed line as related information; and one whose torchrun starts more workers per node than the caller's value lists (`CUDA_VISIBLE_DEVICES=2,3 ./run_train.sh` where run_train.sh runs `torchrun --nproc_per_node=${NGPU}` after `NGPU=${NGPU:-\"8\"}`, a default the caller does not override) is reported there too. Preview: `accelerate launch` in a Slurm job script that asks for GPUs, with neither `--num_processes` nor `--config_file` (nor `--cpu`/`--tpu`, nor an unknown variable among its options), with or without `srun`: on the node, accelerate fills every option not given from the default config of the user who runs the job when one exists there (its `num_processes`, and `gpu_ids`, which it writes into CUDA_VISIBLE_DEVICES over the one Slurm set), a file outside the project written for whatever machine `accelerate config` ran on; silent where the script names HF_HOME or XDG_CACHE_HOME (it then chooses the config's folder). Severity: an error where the count and the GPUs it is compared with are written on the same command or container (a literal `CUDA_VISIBLE_DEVICES=...` prefix or the container's own GPU request beside the launcher's count; vLLM's sizes against them; deepspeed's `--num_gpus` with `--include`, which it refuses; an `--include` id a container lacks), since the launch then certainly fails; a warning where the GPUs come from elsewhere (an `export`, the Slurm allocation, the machine).",
      follows:
        "Launch lines in the file itself (a shell or job script's commands, a Dockerfile's last-stage `CMD`/`ENTRYPOINT`, compose `command`/`entrypoint`, Kubernetes `command`/`args`, `sh -c '...'` in a container's command; for a service or container on `vllm/vllm-openai` without its own `entrypoint`/`command`, its `command`/`args` as the server's arguments; in a shell script, `docker run` (also podman, nerdctl) of that image without `--entrypoint`, with the GPUs of its `--gpus` (a count or `device=` ids; `all` is the machine's GPUs in a plain shell script) and a literal `-e CUDA_VISIBLE_DEVICES=...`) with the CUDA_VISIBLE_DEVICES in force (an inline prefix, the last `export` before the line, the last stage's `ENV`, the service's `environment`, the container's `env`), the container's or job's GPU request, a `$VAR` assigned once to a literal, and, from a shell or job script, the launched `.py` script's own write of CUDA_VISIBLE_DEVICES, a literal at its top level or from one of its options (read beside the launching file or up to three folders above it), an accelerate config named by `--config_file`, the once-assigned literals of a file the script sources (`source env.sh`, a literal path beside the script; the script's own assignments win), a launcher's options given through such a literal or a once-assigned array (`accelerate launch $EXTRA` with `EXTRA=\"--multi_gpu\"`, `torchrun \"${ARGS[@]}\" train.py`; a value that expands variables known at its assignment counts as the literal bash makes of it: `ARGS=\"--nproc_per_node $GPUS\"` after `GPUS=8`), and for a plain shell script the machine's GPU count; an accelerate config YAML is checked on its own. From a shell or job script, also a project shell script that a line runs as a new shell (`bash x.sh`, `sh x.sh`, `./x.sh`: a literal `.sh` path, after the script's literal `cd` commands (`cd \"$(dirname \"$0\")\"` is the script's folder), beside the script or up to three folders above it, as GPU054 finds it; no batch job), for its deepspeed and torchrun launches, with the CUDA_VISIBLE_DEVICES in force on the caller's line, when the child neither assigns, exports, unsets nor reads the variable nor sources a file (and, for torchrun, the launched `.py` does not write it): the child's once-assigned literals and its defaults for names the caller neither sets on the line nor assigns or exports (`NGPU=${NGPU:-\"8\"}`, once, a literal default: bash(1), Parameter Expansion). Accelerate's default config (`$HF_HOME/accelerate/default_config.yaml`, else `$XDG_CACHE_HOME/huggingface/accelerate/default_config.yaml`, else `~/.cache/huggingface/accelerate/default_config.yaml`, where accelerate looks; it reads no other variable for it) is only looked for, through the safe reader: when it exists, a launch without a count is not judged (its count is then the config's, which may be meant for that machine). The files read this way are dependencies of the result (the CLI's cache re-checks the script when one changes, and when accelerate's default config appears or goes; another file created later is not noticed until the script changes). Not followed: variables set by a caller of the linted script (the finding, if any, sits in the caller; a launch with such a variable among its launcher's options may hold any option, a later count, a `--config_file`, a `--hostfile`: nothing is concluded from its options), a caller's CUDA_VISIBLE_DEVICES for a child script's accelerate launches, a default the caller may set in its own environment (the shell it is started from), variables set in a script that is run rather than sourced, shell arithmetic, assignments without `export`, commands built in variables, `bash -c '...'` inside a shell script, branches and subshells (the last `export` or `cd` in the text wins), `cd` to an expansion (then the child is not read), run-time overrides (`docker run -e`), the content of accelerate's default config, deepspeed's `--num_nodes` (without a hostfile deepspeed stops: \"Num nodes is >1 but no extra nodes available via hostfile\"), and DeepSpeed hostfiles other than the one below. A deepspeed launch's `--hostfile`/`-H` in a shell or job script (a literal relative path, one `$VAR` assigned once to it, or `$(dirname \"$0\")/F`) is read through the safe reader where deepspeed opens it, from its working directory: after the script's literal `cd` commands, beside the script or up to three folders above it (as a launched script is found), its `host slots=N` lines checked against a literal `--include`/`--exclude` (`NAME[:SLOT[,SLOT ...]]` joined by `@`); silent for an absolute path or a `cd` elsewhere (the file on the nodes is not the project's), a path the script names a second time (it may write the file before the launch), a file not found (deepspeed then runs on this node alone), `--num_nodes` beside the filter (deepspeed refuses that pair first), and a file with any line other than `host slots=N` (blank and `#` lines aside) or a host listed twice, which releases read differently or refuse. The project's deepspeed pin (`requirements*.txt`, `pyproject.toml` dependencies, as the init catalogue reads them) decides the `--include` slot check: unpinned, the newest release is assumed, which takes the `--include` slots as written. For vLLM's server it is silent where its workers may be on other nodes or its sizes are read elsewhere: `--distributed-executor-backend` other than `mp`, `--nnodes`/`--node-rank`, `--headless`, a data-parallel option other than the size (`--data-parallel-size-local`, `--data-parallel-rank`, `--data-parallel-start-rank`, `--data-parallel-address`, `--data-parallel-backend`, `--data-parallel-hybrid-lb`/`-external-lb`), the Ray switches of releases before 0.5 (`--worker-use-ray`, `--engine-use-ray`), `--config FILE`, an expansion among its options (`$EXTRA_ARGS`, compose's `${VAR}`, Kubernetes' `$(VAR)`: it may hold any of them), a file that starts or names a Ray cluster (`ray start`, `RAY_ADDRESS`, a KubeRay `RayCluster`/`RayService`/`RayJob`, a `LeaderWorkerSet`, vLLM's `multi-node-serving.sh`), `srun ... vllm serve` in a plain shell script (it runs on a cluster node, not on this machine), container arguments that start with a program name (`python -m ...` given to the image's server as its model), and a compose `device_ids` entry that holds several ids joined by commas (for every launcher); other images (one whose ENTRYPOINT runs vLLM under another name) and a Dockerfile `CMD` that gives `vllm/vllm-openai` only arguments are not read. A notebook's shell lines (`!torchrun ...`, `!CUDA_VISIBLE_DEVICES=3 python x.py`) are read as such a script, in the cells' order, with the kernel's `%env` settings before them as exports (IPython runs each `!` line in a shell of its own that inherits the kernel's environment: a `!export` or a bare `!N=8` reaches no other line); findings sit on the cell's line.",
      why: "torchrun starts `--nproc_per_node` workers and gives each a LOCAL_RANK; the launch utility's documentation says this number must be at most the GPUs of the node, each process operating on GPU LOCAL_RANK. A worker whose LOCAL_RANK is at or beyond the visible GPUs has no `cuda:LOCAL_RANK`: selecting it raises 'invalid device ordinal' (measured, ground-truth.md), and workers that wrap around to share a GPU make NCCL fail (measured, docs/ground-truth.md). accelerate passes `num_processes // num_machines` to torchrun with CUDA_VISIBLE_DEVICES set to `gpu_ids`; without `--num_processes` and without a config file it counts the GPUs its launcher sees (`torch.cuda.device_count()`) and starts that many, so a script that then makes one GPU visible in each of them (`os.environ[\"CUDA_VISIBLE_DEVICES\"] = \"1\"`) leaves LOCAL_RANK 1 without a device. vLLM's server runs one worker process per GPU of its tensor-parallel x pipeline-parallel group on the node (its world size) and, with `--data-parallel-size`, one such engine per replica on GPUs of its own (vLLM docs, Data Parallel Deployment: `--data-parallel-size=4 --tensor-parallel-size=2` \"would require 8 GPUs\"); it counts the GPUs it may use from CUDA_VISIBLE_DEVICES, and a world size above them stops it at start-up (\"World size (2) is larger than the number of available GPUs (1) in this node\"; releases before that check fall back to Ray, which stops without Ray installed or waits for GPUs that never come): the same mistake GPU035 reports for `LLM(tensor_parallel_size=...)` in Python. DeepSpeed's launcher unsets CUDA_VISIBLE_DEVICES when `--num_gpus`/`--include`/`--exclude` is given (it says so and goes on with GPUs 0..N-1 or the `--include` slots), also one the caller set for the script that runs it (`CUDA_VISIBLE_DEVICES=4,5,6,7 bash single_node.sh` trains on GPUs 0-3), refuses `--num_gpus` with `--include`, and refuses an `--include` slot the node lacks. With `--hostfile`, a host's slots are its GPUs 0..slots-1 (`list(range(slots))`), and the launcher stops on a filter host the hostfile does not list (\"Hostname '...' not found in hostfile\") and on a filter slot beyond a host's slots (\"No slot '...' specified on host '...'\"), in every release for `--exclude`; since 0.15.2 a host named in `--include` takes the `--include` slots as written (DeepSpeed #6530), so a hostfile whose `slots=2` means \"GPUs 2 and 3 are free\" with `--include=work1:2,3` stops only the releases before it (deepspeedai/DeepSpeed#3625: let the hostfile list the node's GPUs and choose them with `--include`).",
      example:
        "#!/bin/bash\nCUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node=4 train.py   # GPU040: 4 workers, 2 GPUs\n",
      fix: "#!/bin/bash\nCUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node=2 train.py\n",
      whenNotToCare:
        "Counts are compared only when written as literal numbers (a `$VAR` assigned once in the script to a literal is followed); `--nproc_per_node gpu`/`auto` and a missing count are right by construction, except for `accelerate launch` without a count or a config when the launched script itself narrows CUDA_VISIBLE_DEVICES. The default accelerate config is the one of the machine running the linter: where the job runs on another machine (a cluster node, a container), its config may differ, and a finding without one there may be wrong for it (or one may be missed). Not followed: variables set in another script or by the caller (except a caller's CUDA_VISIBLE_DEVICES that a deepspeed launch of the script it runs drops, or that its torchrun outnumbers), counts computed by the shell (`$((N*2))`), CUDA_VISIBLE_DEVICES assigned without `export` (it reaches the launcher only if the caller exported it), commands built in variables (`$CMD`), a launched script that writes CUDA_VISIBLE_DEVICES more than once, in a branch or a function, after CUDA started, or from anything but an option's value or a literal (`select_device(args.device)` in another module), branches (the last `export` before the launch in the text wins), a Dockerfile's ENV overridden by `docker run -e`, an accelerate config that is not a file of the workspace (the default one under ~/.cache is only looked for), a DeepSpeed hostfile outside the project or written by the script (the one on the launching node may differ), and an unpinned deepspeed for an `--include` slot beyond a hostfile's `slots=` (the newest release runs it on those GPUs). A vLLM server whose workers are placed on other nodes by a Ray cluster the file does not show (one started by hand before the server) needs fewer GPUs on this node: pass `--distributed-executor-backend ray`, which the rule reads as such. CPU-only training (gloo) with more workers than GPUs is fine: silence the line with `# noqa: GPU040`. The machine's count is used only for plain shell scripts (a job script runs on its allocation, a container on its request).",
      references: [
        TORCHRUN_DOC,
        ACCELERATE_DOC,
        ACCELERATE_DEFAULT_DOC,
        'Accelerate, huggingface/accelerate@16cb6eb8: src/accelerate/commands/launch.py:1212 (`if args.config_file is not None or os.path.isfile(default_config_file) and not args.cpu:`), :1243-1245 (`args.gpu_ids = defaults.gpu_ids`), :1259-1277 (every other option still None taken from the config); src/accelerate/utils/launch.py:277 (`prepare_multi_gpu_env`: `current_env["CUDA_VISIBLE_DEVICES"] = gpu_ids` unless `all`), :152 (the same for a single process); src/accelerate/commands/config/default.py:100 (`accelerate config default` writes `num_processes` = the GPUs of the machine it runs on); huggingface/accelerate#1643 (a 3-GPU Slurm job ran 8 processes on GPUs 0-7 from the default config)',
        DEEPSPEED_DOC,
        DEEPSPEED_HOSTFILE_DOC,
        GROUND_TRUTH,
        VLLM_DOC,
        'Docker Compose, GPU support (https://docs.docker.com/compose/gpu-support/): `count` "the number of GPU devices that should be reserved", `device_ids` "the IDs of the GPU devices"',
        "Kubernetes, Schedule GPUs (https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/): GPUs are specified in the limits section (`nvidia.com/gpu`)",
      ],
      language: "bash",
    },
  },
  checkManifest(ctx) {
    if (ctx.manifest.kind === "yaml") checkAccelerateYaml(ctx);
    const facts = ctx.manifest.jobscript;
    const literals = facts ? literalsWithSourced(ctx.file, facts, ctx.read) : new Map<string, string>();
    for (const f of launchesOf(ctx.manifest, literals)) checkLaunch(ctx, f, literals);
    if (facts) checkChildLaunches(ctx, facts);
  },
};

/** An option's literal whole number (through the script's once-assigned literals), or null. */
const optionNumber = (o: OptionValue | null, literals: Map<string, string>): number | null =>
  o ? wholeNumber(resolveLiteral(o.value, literals)) : null;
const wordsRange = (ctx: ManifestRuleContext, a: ShellWord, b: ShellWord): Range =>
  ctx.manifest.src.range(a.start, b.end);

function checkLaunch(ctx: ManifestRuleContext, f: FoundLaunch, literals: Map<string, string>): void {
  const l = f.line;
  // A variable among the launcher's options that is not known may hold any of them (a later
  // --nproc_per_node, a --config_file, a --hostfile): nothing is concluded from them.
  if (l.unknownOptions) return;
  const node = nodeGpus(ctx, f);
  if (l.launcher === "deepspeed") return checkDeepspeed(ctx, f, literals, node);
  if (l.launcher === "accelerate") return checkAccelerate(ctx, f, literals, node);
  if (l.launcher === "vllm") return checkVllm(ctx, f, literals, node);

  // torchrun
  if (!l.processes) return;
  const n = optionNumber(l.processes, literals);
  if (n === null) return;
  const procs: Processes = {
    n,
    range: wordsRange(ctx, l.processes.start, l.processes.end),
    sameLine: true,
    text: `--nproc_per_node ${n}`,
  };
  // A job script's torchrun without CUDA_VISIBLE_DEVICES is compared with the allocation by GPU022.
  visibleOrNode(ctx, f, procs, f.request?.kind === "slurm" ? null : node, literals);
}

/**
 * A Ray cluster the file starts or names (`ray start`, `RAY_ADDRESS`, a KubeRay `RayCluster`/
 * `RayService`/`RayJob`, a LeaderWorkerSet, vLLM's multi-node-serving.sh): vLLM's workers may then
 * be placed on its other nodes, whatever this node has.
 */
const RAY_CLUSTER =
  /\bray\s+start\b|\bRAY_ADDRESS\b|\bkind:\s*Ray(?:Cluster|Service|Job)\b|\bLeaderWorkerSet\b|multi-node-serving/;

/**
 * vLLM's server: its tensor-parallel x pipeline-parallel size (x the data-parallel size: each
 * replica has workers of its own) against the GPUs visible to it. Silent where the workers may sit
 * on other nodes (launch/commandLine.ts `VllmParallel.elsewhere`, {@link RAY_CLUSTER}) or a size is not a literal.
 */
function checkVllm(
  ctx: ManifestRuleContext,
  f: FoundLaunch,
  literals: Map<string, string>,
  node: NodeGpus | null,
): void {
  const p = f.line.vllm;
  if (!p || p.elsewhere || RAY_CLUSTER.test(ctx.manifest.src.text)) return;
  const sizes = [p.tp, p.pp, p.dp].map((o) => (o ? optionNumber(o, literals) : 1));
  if (sizes.some((n) => n === null || n < 1)) return;
  const [tp, pp, dp] = sizes as number[];
  const n = tp * pp * dp;
  const at = p.tp ?? p.pp ?? p.dp;
  if (n < 2 || !at) return;
  const parts = [p.tp, p.pp, p.dp].flatMap((o, i) =>
    o ? [`${launchedWords(o)}${o.value === String(sizes[i]) ? "" : ` (${sizes[i]})`}`] : [],
  );
  const procs: Processes = {
    n,
    range: wordsRange(ctx, at.start, at.end),
    sameLine: true,
    text: parts.join(" "),
    vllm: { world: tp * pp, dp },
  };
  // `srun ... vllm serve` from a plain shell script runs on a node of the cluster, not on this machine.
  visibleOrNode(ctx, f, procs, f.onThisMachine && f.line.underSrun ? null : node, literals);
}

/** The GPUs a launch's node offers when CUDA_VISIBLE_DEVICES is not read. */
type NodeGpus = { n: number; text: string; certain: boolean; range: Range | null };

/** What the launcher's node offers when CUDA_VISIBLE_DEVICES is not read: the request, else the machine. */
function nodeGpus(ctx: ManifestRuleContext, f: FoundLaunch): NodeGpus | null {
  const machine = f.onThisMachine ? ctx.machine.gpuCount : null;
  return f.request
    ? {
        n: f.request.count,
        text:
          f.request.kind === "slurm"
            ? `the job's allocation, ${f.request.from}`
            : `the container's GPU request, ${f.request.from}`,
        certain: f.request.kind === "container",
        range: f.request.range as Range | null,
      }
    : machine !== null && machine > 0
      ? { n: machine, text: "this machine's GPU count", certain: false, range: null }
      : null;
}

/** The deepspeed option that makes it drop CUDA_VISIBLE_DEVICES, and the GPUs it uses instead, in words. */
interface DeepspeedDrop {
  given: OptionValue;
  /** `GPUs 0..3 (--num_gpus 4)`, `GPUs 2,3 (--include localhost:2,3)`, `the GPUs --exclude localhost:0 leaves`. */
  uses: string;
}

/**
 * What deepspeed's launcher does with a CUDA_VISIBLE_DEVICES `value` in force for launch `l`
 * (deepspeed/launcher/runner.py `main`): with no hostfile and one of `--num_gpus`, `--include`,
 * `--exclude` given, it prints "... but ignoring it" and deletes the variable, then starts its
 * workers on local GPUs 0..N-1 (`--num_gpus N`) or on the `--include` slots. Null when it keeps the
 * value (none of those options, a `--hostfile`, or `--num_gpus` with `--include`, which it refuses),
 * or when the GPUs it uses instead are the first ones the value lists (`CUDA_VISIBLE_DEVICES=0,1`
 * with `--num_gpus 2`: the workers land where they would have), or may be (`--num_gpus $N` with
 * a value that starts with GPU 0, `--include` ids not known). GPU040 reports the value set in
 * the launching script and the one a caller sets for a script that launches deepspeed.
 */
function deepspeedDrops(l: LaunchLine, value: string, literals: Map<string, string>): DeepspeedDrop | null {
  if (l.unknownOptions) return null; // a variable among its options may hold a --hostfile
  const filter = l.gpuIds ?? l.exclude;
  const given = l.processes ?? filter;
  const hostfile = l.words.some(
    (w) => w.value === "--hostfile" || w.value.startsWith("--hostfile=") || w.value === "-H",
  );
  if (!given || hostfile || (l.processes && filter)) return null;
  const n = l.processes ? optionNumber(l.processes, literals) : null;
  if (n === 0) return null; // `args.num_gpus > 0` is what drops it
  const used =
    n !== null
      ? n > 0
        ? Array.from({ length: n }, (_, i) => i)
        : null
      : l.gpuIds
        ? deepspeedLocalIds(resolveLiteral(l.gpuIds.value, literals) ?? "")
        : null;
  const listed = idList(value);
  if (used && listed && used.every((id, i) => listed[i] === id)) return null;
  // Ids not known (`--num_gpus $N`, `--include localhost:$GPUS`): reported only where they differ
  // whatever they are (0..N-1 starts with GPU 0); `--exclude` leaves GPUs the value does not list.
  if (l.processes && n === null && listed && listed[0] === 0) return null;
  if (!l.processes && l.gpuIds && !used) return null;
  const option = launchedWords(given);
  return {
    given,
    uses: used
      ? `GPU${used.length > 1 ? "s" : ""} ${n !== null && n > 1 ? `0..${n - 1}` : used.join(",")} (${option})`
      : l.processes
        ? `GPUs 0..N-1 (${option})`
        : `the GPUs ${option} leaves`,
  };
}

const CVD = "CUDA_VISIBLE_DEVICES";

/**
 * Whether a script may give CUDA_VISIBLE_DEVICES its own value or read it: it assigns, exports,
 * unsets or expands it anywhere (`env -u`, an inline prefix), or sources a file (which may).
 */
function ownsVisible(facts: JobScriptFacts): boolean {
  return facts.commands.some(
    (c) =>
      c.assignments.some((a) => a.name === CVD) ||
      c.words.some((w) => w.value === CVD || w.value.startsWith(`${CVD}=`)) ||
      expandsVariable(c, CVD) ||
      ((c.words[0]?.value === "source" || c.words[0]?.value === ".") &&
        !/(?:^|\/)activate$/.test(c.words[1]?.value ?? "")),
  );
}

/**
 * A caller's CUDA_VISIBLE_DEVICES that a deepspeed launch drops: the script runs a project shell
 * script as a new shell (`CUDA_VISIBLE_DEVICES=4,5,6,7 bash single_node.sh`, or after `export`;
 * launch/child.ts finds it, after the script's `cd` commands) whose deepspeed launch gives
 * `--num_gpus`/`--include`/`--exclude` and which sets no CUDA_VISIBLE_DEVICES of its own:
 * deepspeed unsets the value ({@link deepspeedDrops}). Reported on the caller's command, where the
 * value is written and can be moved, with the child's deepspeed line as related information.
 */
function checkChildLaunches(ctx: ManifestRuleContext, facts: JobScriptFacts): void {
  if (!ctx.file || !ctx.manifest.src.text.includes(".sh")) return;
  for (const c of facts.commands) {
    const line = parseLaunchLine(c.words, c.assignments);
    if (line.launcher !== "other" || !line.words.some((w) => w.value.endsWith(".sh"))) continue;
    const { visible, unknown } = visibleForCommand(ctx.manifest, c, line);
    if (!visible || unknown || visible.value === null || !idList(visible.value)) continue;
    const cwd = workingDirectory(facts.commands, c.start, ctx.file);
    const child = cwd === null ? null : childShellScript(line.words, ctx.file, ctx.read, cwd);
    if (!child || ownsVisible(child.facts)) continue;
    const model = buildManifestModel(child.text, "jobscript");
    const literals = literalsWithSourced(child.path, model.jobscript!, ctx.read);
    if (childTorchrun(ctx, facts, c, child, model, literals, visible)) continue;
    for (const launch of launchesOf(model, literals)) {
      const drops = launch.line.launcher === "deepspeed" ? deepspeedDrops(launch.line, visible.value, literals) : null;
      if (!drops || launch.line.clearsEnv) continue;
      const at = model.src.range(drops.given.start.start, drops.given.end.end);
      const where = `${relative(dirname(ctx.file), child.path)}:${at.start.line + 1}`;
      const option = launchedWords(drops.given);
      ctx.report({
        range: ctx.manifest.src.range(c.start, child.pathWord.end),
        message: `CUDA_VISIBLE_DEVICES="${visible.value}" (${visible.from}) does not reach the workers of ${child.command}: its deepspeed launch (${where}) unsets it, as deepspeed does when --num_gpus, --include or --exclude is given, and starts its workers on ${drops.uses}, not on the visible devices ${visible.value} chosen here; name them in that script with --include localhost:${visible.value} in place of ${option.split(" ")[0]}, or launch it without --num_gpus/--include/--exclude (deepspeed then takes CUDA_VISIBLE_DEVICES as its --include)`,
        related: [
          { range: visible.range, message: "CUDA_VISIBLE_DEVICES, which deepspeed unsets" },
          { range: at, message: `deepspeed ${option}: it unsets CUDA_VISIBLE_DEVICES`, file: child.path },
        ],
      });
      break;
    }
  }
}

/**
 * The child script's own defaults for names its caller may set: `NGPU=${NGPU:-"8"}` (also `:=`,
 * `-`, `=`), assigned once, a literal default, by name, for the names the caller does not assign
 * or export anywhere (bash(1), Parameter Expansion: `${parameter:-word}` "If parameter is unset or
 * null, the expansion of word is substituted"). Where the caller sets the name, it is left out.
 */
function childDefaults(child: JobScriptFacts, caller: JobScriptFacts, line: ShellCommand): Map<string, string> {
  const out = new Map<string, string>();
  const callerSets = (name: string) =>
    line.assignments.some((a) => a.name === name) ||
    caller.assigned.has(name) ||
    caller.commands.some((c) => c.words.some((w) => w.value === name || w.value.startsWith(`${name}=`)));
  for (const c of child.commands) {
    if (c.words.length) continue;
    for (const a of c.assignments) {
      const m = /^\$\{([A-Za-z_][A-Za-z0-9_]*):?[-=]("?)([^"'$`}]*)\2\}$/.exec(
        a.word.raw.slice(a.word.raw.indexOf("=") + 1),
      );
      if (m && m[1] === a.name && !child.literals.has(a.name) && !callerSets(a.name)) out.set(a.name, m[3]);
    }
  }
  for (const name of [...out.keys()])
    if (child.commands.filter((c) => c.assignments.some((a) => a.name === name)).length !== 1) out.delete(name);
  return out;
}

/**
 * A caller's CUDA_VISIBLE_DEVICES for a project shell script whose torchrun starts more workers per
 * node than the value lists (`CUDA_VISIBLE_DEVICES=2,3 ./run_train.sh` where run_train.sh runs
 * `torchrun --nproc_per_node=${NGPU}` after `NGPU=${NGPU:-"8"}`: pytorch/torchtitan#423), through
 * the child's literals and its defaults for names this caller does not set ({@link childDefaults}).
 * Silent where the launched `.py` writes CUDA_VISIBLE_DEVICES itself. Reported on the caller's
 * command; true when reported.
 */
function childTorchrun(
  ctx: ManifestRuleContext,
  caller: JobScriptFacts,
  c: ShellCommand,
  child: ChildShellScript,
  model: ManifestModel,
  literals: Map<string, string>,
  visible: VisibleSetting,
): boolean {
  const ids = idList(visible.value ?? "");
  if (!ids) return false;
  const defaults = childDefaults(child.facts, caller, c);
  const known = new Map([...defaults, ...literals]);
  for (const launch of launchesOf(model, known)) {
    const l = launch.line;
    // A variable among its options may hold a later count (launchvar: nothing is concluded then).
    if (l.launcher !== "torchrun" || !l.processes || l.unknownOptions || l.clearsEnv) continue;
    if (launch.visible || launch.visibleUnknown) continue;
    const n = optionNumber(l.processes, known);
    if (n === null || n <= ids.length) continue;
    const script = l.script ? resolveLiteral(l.script.value, known) : null;
    const read = script ? launchedScript(child.path, script, ctx.read) : null;
    const own = read ? launchedScriptFacts(read.text) : null;
    if (own && (own.visibleLiteral || own.visibleDests.length)) continue;
    const at = model.src.range(l.processes.start.start, l.processes.end.end);
    const where = `${relative(dirname(ctx.file!), child.path)}:${at.start.line + 1}`;
    const name = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/.exec(l.processes.value)?.[1];
    const dflt = name && !literals.has(name) ? defaults.get(name) : undefined;
    const extra = n - ids.length;
    ctx.report({
      range: ctx.manifest.src.range(c.start, child.pathWord.end),
      message: `CUDA_VISIBLE_DEVICES="${visible.value}" (${visible.from}) leaves ${plural(ids.length, "GPU")} to ${child.command}, whose torchrun starts ${n} workers per node (${launchedWords(l.processes)} at ${where}${dflt !== undefined ? `, ${name} defaulting to ${dflt} there and not set here` : ""}): the ${extra === 1 ? "worker" : `${extra} workers`} with LOCAL_RANK ${ids.length}${extra > 1 ? `..${n - 1}` : ""} ${extra === 1 ? "has" : "have"} no cuda:LOCAL_RANK ('invalid device ordinal' when selected); ${dflt !== undefined ? `set ${name}=${ids.length} on this line` : `start ${ids.length} per node there`}`,
      related: [
        { range: visible.range, message: "the GPUs visible to that script's workers" },
        { range: at, message: `torchrun ${launchedWords(l.processes)}: ${n} workers per node`, file: child.path },
      ],
    });
    return true;
  }
  return false;
}

/** An option's words as written (`--num_gpus 4`, `--include=localhost:1`). */
const launchedWords = (o: OptionValue): string =>
  o.start === o.end ? o.start.value : `${o.start.value} ${o.end.value}`;

/**
 * deepspeed: `--num_gpus` with `--include`/`--exclude`, a CUDA_VISIBLE_DEVICES it ignores, and
 * `--include` ids or a `--num_gpus` beyond the node's GPUs.
 */
function checkDeepspeed(
  ctx: ManifestRuleContext,
  f: FoundLaunch,
  literals: Map<string, string>,
  node: NodeGpus | null,
): void {
  const l = f.line;
  const numGpus = optionNumber(l.processes, literals);
  const filter = l.gpuIds ?? l.exclude;
  if (l.processes && filter) {
    ctx.report({
      range: wordsRange(ctx, l.processes.start, l.processes.end),
      severity: "error",
      message: `deepspeed refuses --num_gpus together with ${l.gpuIds ? "--include" : "--exclude"} ("Cannot specify num_nodes/gpus with include/exclude"): keep one of them`,
    });
    return;
  }
  const drops = f.visible ? deepspeedDrops(l, f.visible.value ?? "", literals) : null;
  if (f.visible && drops) {
    ctx.report({
      range: wordsRange(ctx, drops.given.start, drops.given.end),
      related: [{ range: f.visible.range, message: "CUDA_VISIBLE_DEVICES, which deepspeed unsets" }],
      message: `deepspeed ignores CUDA_VISIBLE_DEVICES="${f.visible.value}" (${f.visible.from}) when --num_gpus, --include or --exclude is given: it unsets it and starts its workers on ${drops.uses}; pick the GPUs with --include localhost:${f.visible.value ?? ""} instead`,
    });
  }
  // A filter the hostfile refuses is reported against it, not against this node's GPUs as well.
  if (filter && checkHostfile(ctx, f, filter, literals)) return;
  const ids = l.gpuIds ? deepspeedLocalIds(resolveLiteral(l.gpuIds.value, literals) ?? "") : null;
  if (ids && node) {
    const missing = ids.filter((i) => i >= node.n);
    if (missing.length) {
      ctx.report({
        range: wordsRange(ctx, l.gpuIds!.start, l.gpuIds!.end),
        ...(node.certain ? { severity: "error" as const } : {}),
        message: `deepspeed --include names GPU${missing.length > 1 ? "s" : ""} ${missing.join(", ")}, but only GPU${node.n > 1 ? `s 0..${node.n - 1} are` : " 0 is"} there (${node.text}): deepspeed stops with "No slot '${missing[0]}' specified on host 'localhost'"`,
        ...(node.range ? { related: [{ range: node.range, message: "the GPUs this launch gets" }] } : {}),
      });
    }
    return;
  }
  if (numGpus !== null && node && numGpus > node.n)
    report(
      ctx,
      f,
      {
        n: numGpus,
        range: wordsRange(ctx, l.processes!.start, l.processes!.end),
        sameLine: true,
        text: `--num_gpus ${numGpus}`,
      },
      { n: node.n, text: node.text, certain: node.certain, range: node.range },
    );
}

/** The first release that takes a host's `--include` slots as written (deepspeedai/DeepSpeed 5cbbff40, #6530). */
const DEEPSPEED_INCLUDE_AS_WRITTEN = ">=0.15.2";

/**
 * The hostfile of a deepspeed launch in a shell or job script (`--hostfile F`, `-H F`: a literal
 * relative path or one `$VAR` assigned to it once, or `$(dirname "$0")/F`), read through the safe
 * reader as deepspeed opens it from its working directory: after the script's literal `cd`
 * commands, beside the script or up to three folders above it (launch/script.ts `launchedScript`,
 * as a launched script is found). Null where that is not certain: an absolute path or a `cd`
 * elsewhere (the file on the nodes is not the project's), the path named a second time in the
 * script (it may write the file before the launch), a file not found, or one not in the form
 * every release reads alike (launch/hostfile.ts `parseDeepspeedHostfile`).
 */
function readHostfile(
  ctx: ManifestRuleContext,
  f: FoundLaunch,
  literals: Map<string, string>,
): { pool: Hostfile; path: string; written: string } | null {
  const o = f.line.hostfile;
  const facts = ctx.manifest.jobscript;
  // `--num_nodes` with a filter stops deepspeed first ("Cannot specify num_nodes/gpus with include/exclude").
  const numNodes = f.line.words.some((w) => /^--num[_-]nodes(?:=|$)/.test(w.value));
  if (!o || !facts || !ctx.file || numNodes) return null;
  const own = SCRIPT_DIR.test(o.value) ? o.value : null;
  const value = own ?? resolveLiteral(o.value, literals);
  if (!value || (!own && (/[$`~*?]/.test(value) || isAbsolute(value)))) return null;
  if (!own) {
    const esc = value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const named = ctx.manifest.src.text.match(new RegExp(`(?<![\\w./-])${esc}(?![\\w./-])`, "g"));
    if (named?.length !== 1) return null;
  }
  const cwd = workingDirectory(facts.commands, f.line.words[0]?.start ?? 0, ctx.file);
  const home = dirname(ctx.file);
  if (cwd === null || (isAbsolute(cwd) && cwd !== home && !cwd.startsWith(home + sep))) return null;
  const found = launchedScript(ctx.file, cwd && !own ? join(cwd, value) : value, ctx.read, "");
  const pool = found ? parseDeepspeedHostfile(found.text) : null;
  return found && pool ? { pool, path: found.path, written: o.value } : null;
}

/**
 * deepspeed `--include`/`--exclude` against the launch's hostfile ({@link readHostfile}): a host
 * it does not list, a slot at or beyond a host's `slots=` (launch/hostfile.ts `hostfileProblems`;
 * for `--include`, only where the project pins deepspeed below 0.15.2, which takes a host's slots
 * as GPUs 0..slots-1; later releases take the `--include` slots as written). True when it reported.
 */
function checkHostfile(
  ctx: ManifestRuleContext,
  f: FoundLaunch,
  filter: OptionValue,
  literals: Map<string, string>,
): boolean {
  const hf = readHostfile(ctx, f, literals);
  const value = hf ? resolveLiteral(filter.value, literals) : null;
  const specs = value ? parseHostFilter(value) : null;
  if (!hf || !specs) return false;
  const include = filter === f.line.gpuIds;
  const pin = ctx.libraryPins?.deepspeed;
  let before = false;
  try {
    before = !!pin && !rangesOverlap(DEEPSPEED_INCLUDE_AS_WRITTEN, pin);
  } catch {
    before = false;
  }
  const option = include ? "--include" : "--exclude";
  const name = relative(dirname(ctx.file!), hf.path) || hf.written;
  const problems = hostfileProblems(hf.pool, specs, include, before);
  const gpus = (n: number) => (n > 1 ? `GPUs 0..${n - 1}` : n === 1 ? "GPU 0" : "no GPU");
  for (const p of problems) {
    const host = hf.pool.get(p.host) ?? [...hf.pool.values()][0];
    const at: Range = { start: { line: host.line, character: 0 }, end: { line: host.line, character: host.length } };
    const who = include ? `the pinned deepspeed${pin} (before 0.15.2) stops` : "deepspeed stops";
    ctx.report({
      range: wordsRange(ctx, filter.start, filter.end),
      message:
        p.kind === "host"
          ? `deepspeed ${option} names host '${p.host}', which the hostfile "${name}" does not list (${[...hf.pool.keys()].join(", ")}): deepspeed stops with "Hostname '${p.host}' not found in hostfile"; name the hosts as the hostfile does`
          : `deepspeed ${option} names slot${p.slots.length > 1 ? "s" : ""} ${p.slots.join(", ")} of host '${p.host}', but the hostfile "${name}" gives it slots=${host.slots} (${gpus(host.slots)}): ${who} with "No slot '${p.slots[0]}' specified on host '${p.host}'"; ${include ? "let slots= count all of the node's GPUs and pick the ones to use with --include" : "--exclude can only remove the slots the hostfile lists"}`,
      related: [
        p.kind === "host"
          ? { range: at, message: "the hosts deepspeed may use", file: hf.path }
          : { range: at, message: `${p.host}: slots=${host.slots}, ${gpus(host.slots)}`, file: hf.path },
      ],
    });
  }
  return problems.length > 0;
}

/**
 * accelerate launch: more processes per machine than its `--gpu_ids` (or its config's `gpu_ids`),
 * else than the GPUs visible to it.
 */
function checkAccelerate(
  ctx: ManifestRuleContext,
  f: FoundLaunch,
  literals: Map<string, string>,
  node: NodeGpus | null,
): void {
  const l = f.line;
  const cfg =
    l.configFile && ctx.manifest.kind === "jobscript"
      ? readAccelerateConfig(ctx.file, resolveLiteral(l.configFile.value, literals) ?? "$", ctx.read)
      : null;
  const total = optionNumber(l.processes, literals) ?? (l.processes ? null : (cfg?.numProcesses ?? null));
  if (total === null) {
    if (!l.processes && !l.configFile && !checkAccelerateDefault(ctx, f, literals)) checkJobDefaultConfig(ctx, f);
    return;
  }
  const machines = optionNumber(l.machines, literals) ?? (l.machines ? null : (cfg?.numMachines ?? 1));
  if (machines === null || machines < 1) return;
  const perNode = Math.floor(total / machines);
  const where = l.processes
    ? { range: wordsRange(ctx, l.processes.start, l.processes.end), sameLine: true }
    : { range: wordsRange(ctx, l.configFile!.start, l.configFile!.end), sameLine: false };
  const procs: Processes = {
    n: perNode,
    ...where,
    text: `--num_processes ${total}${machines > 1 ? ` on ${machines} machines` : ""}${l.processes ? "" : ` (from ${cfg!.file.replace(/^.*\//, "")})`}`,
  };
  const idsText = l.gpuIds ? resolveLiteral(l.gpuIds.value, literals) : (cfg?.gpuIds ?? null);
  const ids = idList(idsText);
  if (ids) {
    // accelerate writes gpu_ids into CUDA_VISIBLE_DEVICES; CUDA stops at the first id the node lacks.
    const usable = node ? ids.findIndex((i) => i >= node.n) : -1;
    const n = usable < 0 ? ids.length : usable;
    const text = `--gpu_ids ${idsText}${l.gpuIds ? "" : ` from ${cfg!.file.replace(/^.*\//, "")}`}${usable >= 0 ? `, of which CUDA keeps ${n}: ${node!.text} has no GPU ${ids[usable]}` : ""}`;
    if (perNode > n)
      report(ctx, f, procs, {
        n,
        text,
        certain: !!l.gpuIds === procs.sameLine && (usable < 0 || node!.certain),
        range: null,
      });
    return;
  }
  if (idsText !== null && idsText.trim() !== "all") return; // ids not read
  // `srun ... vllm serve` from a plain shell script runs on a node of the cluster, not on this machine.
  visibleOrNode(ctx, f, procs, f.onThisMachine && f.line.underSrun ? null : node, literals);
}

/**
 * Whether accelerate's default config may exist where accelerate runs: the file on the machine
 * running the linter (accelerate/commands/config/config_args.py: `HF_HOME`, else
 * `$XDG_CACHE_HOME/huggingface`, else `~/.cache/huggingface`, then `accelerate/default_config.yaml`;
 * accelerate reads no other variable for it). It is looked for through the safe reader (a readable
 * one becomes a dependency of the result) and by its name (one the reader refuses still counts);
 * its content is not read: with it, the count is the config's. An empty `HF_HOME` or
 * `XDG_CACHE_HOME` names a folder relative to where accelerate runs: unknown, so it may.
 */
function defaultAccelerateConfigMayExist(read: ManifestRuleContext["read"]): boolean {
  const env = process.env;
  if (env.HF_HOME === "" || env.XDG_CACHE_HOME === "") return true;
  const hf = env.HF_HOME ?? join(env.XDG_CACHE_HOME ?? "~/.cache", "huggingface");
  const home = hf === "~" || hf.startsWith("~/") ? join(homedir(), hf.slice(1)) : hf;
  const path = resolve(home, "accelerate", "default_config.yaml");
  // Its absence decides the result: recorded as a dependency either way.
  return read(path, 256 * 1024, true) !== null || existsSync(path);
}

/** accelerate's launcher options that start no GPU process per GPU (`--cpu`, `--tpu`), in either spelling. */
const NOT_PER_GPU = /^--(?:cpu|tpu|use[-_]cpu)$/;

/**
 * `accelerate launch train.py` with no `--num_processes`, no `--config_file` and no default config:
 * accelerate starts one process per GPU its launcher sees (commands/launch.py
 * `_validate_launch_command`: `args.num_processes = torch.cuda.device_count()`), the CUDA_VISIBLE_DEVICES
 * in force, else, for a plain shell script, the machine's GPUs. Reported when the launched script
 * writes CUDA_VISIBLE_DEVICES itself ({@link scriptVisible}) to fewer GPUs: every process sees
 * those, and the one with LOCAL_RANK 1 asks for a device ordinal that is not there.
 */
function checkAccelerateDefault(ctx: ManifestRuleContext, f: FoundLaunch, literals: Map<string, string>): boolean {
  const l = f.line;
  if (!l.script || l.machines || l.gpuIds || l.underSrun || f.visibleUnknown) return false;
  if (l.words.slice(0, l.words.indexOf(l.script)).some((w) => NOT_PER_GPU.test(w.value))) return false;
  const sees = f.visible ? visibleCount(f.visible.value ?? "") : f.onThisMachine ? ctx.machine.gpuCount : null;
  if (sees === null || sees < 2) return false;
  const own = scriptVisible(ctx, f, literals);
  if (!own || own.n >= sees || defaultAccelerateConfigMayExist(ctx.read)) return false;
  const counted = f.visible
    ? `CUDA_VISIBLE_DEVICES="${f.visible.value}", ${f.visible.from}`
    : "this machine's GPU count";
  report(
    ctx,
    f,
    {
      n: sees,
      range: wordsRange(ctx, l.words[0], l.script),
      sameLine: false,
      text: `no --num_processes and no accelerate config: one per GPU the launcher sees (${counted})`,
    },
    own,
    `pass --num_processes ${own.n}, or choose the GPUs before the launcher (CUDA_VISIBLE_DEVICES=... accelerate launch --num_processes ${own.n} ...) instead of in the script`,
  );
  return true;
}

/** Where a job script points accelerate's default config elsewhere (config_args.py reads only these). */
const CONFIG_HOME = /\b(?:HF_HOME|XDG_CACHE_HOME)\b/;

/**
 * Preview: `accelerate launch train.py` in a Slurm job script that asks for GPUs, with neither
 * `--num_processes` nor `--config_file` (nor `--cpu`/`--tpu`): on the node, accelerate takes its
 * settings from the default config of the user who runs the job when one exists there
 * (huggingface/accelerate@16cb6eb8 src/accelerate/commands/launch.py:1212
 * `if args.config_file is not None or os.path.isfile(default_config_file) and not args.cpu:`, and
 * :1243-1245 and :1259-1277 fill `gpu_ids` and every other unset option, `num_processes` among
 * them, from it), and `gpu_ids` other than `all` replace the CUDA_VISIBLE_DEVICES Slurm set
 * (src/accelerate/utils/launch.py:277 in `prepare_multi_gpu_env`, :152 for a single process).
 * `accelerate config default` writes the GPU count of the machine it ran on
 * (commands/config/default.py:100). The config is outside the project and the linter's machine is
 * not the node: the finding says the count is not the job's, not that it is wrong. Silent where the
 * script names HF_HOME or XDG_CACHE_HOME (the config is then one it chooses).
 */
function checkJobDefaultConfig(ctx: ManifestRuleContext, f: FoundLaunch): void {
  const l = f.line;
  const job = ctx.manifest.jobscript;
  if (ctx.manifest.kind !== "jobscript" || !job?.request.asksForGpus || !l.script) return;
  if (l.words.slice(0, l.words.indexOf(l.script)).some((w) => NOT_PER_GPU.test(w.value))) return;
  if (CONFIG_HOME.test(ctx.manifest.src.text)) return;
  const req = f.request?.kind === "slurm" ? f.request : null;
  const asked = req ? `the ${plural(req.count, "GPU")} this job asks for (${req.from})` : "the GPUs this job asks for";
  const n = req ? String(req.count) : "N";
  ctx.report({
    range: wordsRange(ctx, l.words[0], l.script),
    preview: true,
    message: `accelerate launch without --num_processes or --config_file: on the node it takes its process count and gpu_ids from the default accelerate config of the user running the job (~/.cache/huggingface/accelerate/default_config.yaml, where one exists; \`accelerate config default\` writes the GPU count of the machine it ran on), not from ${asked}, and gpu_ids other than "all" replace the CUDA_VISIBLE_DEVICES Slurm set, so processes may land on GPUs outside the allocation or name devices that are not there; pass --num_processes ${n} --gpu_ids all (or --config_file with the project's config)`,
    ...(req ? { related: [{ range: req.range, message: "the GPUs this job asks for" }] } : {}),
  });
}

/** The GPUs a launch's workers see, as {@link report} compares them with the processes. */
interface Visible {
  n: number;
  text: string;
  certain: boolean;
  range: Range | null;
  /** The file `range` is in, when it is not the linted one (the launched script). */
  file?: string;
}

/**
 * The CUDA_VISIBLE_DEVICES that the launched script writes itself, which every worker it runs
 * sees: its one write of the variable, either a literal at its top level before CUDA starts
 * (`os.environ["CUDA_VISIBLE_DEVICES"] = "1"`: launch/script.ts `visibleLiteral`), or from one of
 * its own options given on the line (`train.py --device 0,1` with `os.environ["CUDA_VISIBLE_DEVICES"]
 * = args.device` and `add_argument("--device", ...)`). Null when the script cannot be read, writes
 * the variable otherwise, or the option is not on the line with a literal value.
 */
function scriptVisible(ctx: ManifestRuleContext, f: FoundLaunch, literals: Map<string, string>): Visible | null {
  const l = f.line;
  if (!l.script || ctx.manifest.kind !== "jobscript") return null;
  const script = resolveLiteral(l.script.value, literals) ?? "$";
  const read = launchedScript(ctx.file, script, ctx.read);
  const facts = read === null ? null : launchedScriptFacts(read.text);
  if (!read || !facts) return null;
  const name = script.replace(/^.*\//, "");
  const lit = facts.visibleLiteral;
  const count = lit ? visibleCount(lit.value) : null;
  if (lit)
    return count === null
      ? null
      : {
          n: count,
          text: `CUDA_VISIBLE_DEVICES="${lit.value}", which ${name}:${lit.line} sets in each of them before CUDA starts`,
          certain: false,
          range: lit.range,
          file: read.path,
        };
  const options = facts.visibleDests.flatMap((d) => optionsWithDest(facts, d));
  if (!options.length) return null;
  let found: { value: string; start: ShellWord; end: ShellWord } | null = null;
  const args = l.scriptArgs;
  for (let k = 0; k < args.length && args[k].value !== "--"; k++) {
    const w = args[k].value;
    const eq = w.indexOf("=");
    if (eq > 0 && options.includes(w.slice(0, eq))) found = { value: w.slice(eq + 1), start: args[k], end: args[k] };
    else if (options.includes(w))
      found = k + 1 < args.length ? { value: args[k + 1].value, start: args[k], end: args[k + 1] } : null;
  }
  const value = found ? resolveLiteral(found.value, literals) : null;
  const ids = value === null ? null : idList(value);
  if (!found || !ids) return null;
  return {
    n: ids.length,
    text: `CUDA_VISIBLE_DEVICES="${value}": ${name} sets it from ${found.start === found.end ? found.start.value : `${found.start.value} ${found.end.value}`}`,
    certain: false,
    range: wordsRange(ctx, found.start, found.end),
  };
}

/** Compares with the CUDA_VISIBLE_DEVICES in force (the launched script's own write first), else with the node's GPUs. */
function visibleOrNode(
  ctx: ManifestRuleContext,
  f: FoundLaunch,
  procs: Processes,
  node: Visible | null,
  literals: Map<string, string>,
): void {
  const own = scriptVisible(ctx, f, literals);
  if (own) {
    if (procs.n > own.n) report(ctx, f, procs, own);
    return;
  }
  if (f.visibleUnknown) return;
  if (f.visible) {
    const v = visibleCount(f.visible.value ?? "");
    if (v === null) return;
    if (procs.n > v)
      report(ctx, f, procs, {
        n: v,
        text: `CUDA_VISIBLE_DEVICES="${f.visible.value}", ${f.visible.from}`,
        certain: f.visible.sameCommand,
        range: f.visible.range,
      });
    return;
  }
  if (node && procs.n > node.n) report(ctx, f, procs, node);
}

/**
 * Reports more workers than visible GPUs on the processes' words.
 * @param advice what to do instead, when more than "start N per node" can be said
 */
function report(ctx: ManifestRuleContext, f: FoundLaunch, procs: Processes, visible: Visible, advice?: string): void {
  if (procs.vllm) return reportVllm(ctx, f, procs, procs.vllm, visible);
  const name = LAUNCHER_NAME[f.line.launcher];
  const extra = procs.n - visible.n;
  ctx.report({
    range: procs.range,
    ...(visible.certain && procs.sameLine ? { severity: "error" as const } : {}),
    message: `${name} starts ${procs.n} worker${procs.n === 1 ? "" : "s"} per node (${procs.text}, LOCAL_RANK 0..${procs.n - 1}) but only ${plural(visible.n, "GPU")} ${visible.n === 1 ? "is" : "are"} visible to them (${visible.text}): the ${extra === 1 ? "worker" : `${extra} workers`} with LOCAL_RANK ${visible.n}${extra > 1 ? `..${procs.n - 1}` : ""} ${extra === 1 ? "has" : "have"} no cuda:LOCAL_RANK ('invalid device ordinal' when selected), and ranks sharing a GPU make NCCL fail; ${advice ?? `start ${visible.n} per node`}`,
    ...(visible.range
      ? {
          related: [
            {
              range: visible.range,
              message: "the GPUs visible to this launch",
              ...(visible.file ? { file: visible.file } : {}),
            },
          ],
        }
      : {}),
  });
}

/**
 * Reports a vLLM server that needs more GPUs than are visible to it, on its size option: vLLM
 * refuses a world size (tensor-parallel x pipeline-parallel) above the node's GPUs, and each
 * data-parallel replica takes GPUs of its own.
 */
function reportVllm(
  ctx: ManifestRuleContext,
  f: FoundLaunch,
  procs: Processes,
  v: { world: number; dp: number },
  visible: Visible,
): void {
  const k = visible.n;
  const what =
    v.world > k
      ? `vLLM stops at start-up ("World size (${v.world}) is larger than the number of available GPUs (${k}) in this node"; older releases fall back to Ray, which stops without Ray installed or waits for GPUs that never come)`
      : `each data-parallel replica's engine takes ${plural(v.world, "GPU")} of its own (replica i the visible GPUs from i x ${v.world} on), so only ${Math.floor(k / v.world)} of the ${v.dp} replicas ${Math.floor(k / v.world) === 1 ? "finds" : "find"} theirs and the server does not start`;
  const server = f.line.imageEntrypoint ? `the image's vllm serve` : "vllm serve";
  ctx.report({
    range: procs.range,
    ...(visible.certain && procs.sameLine ? { severity: "error" as const } : {}),
    message: `${server} needs ${procs.n} GPUs (${procs.text}: one worker per GPU of the tensor-parallel x pipeline-parallel group${v.dp > 1 ? ", for each data-parallel replica" : ""}) but only ${plural(k, "GPU")} ${k === 1 ? "is" : "are"} visible to it (${visible.text}): ${what}; give it ${procs.n} GPUs or lower the sizes`,
    ...(visible.range
      ? {
          related: [
            {
              range: visible.range,
              message: "the GPUs visible to this server",
              ...(visible.file ? { file: visible.file } : {}),
            },
          ],
        }
      : {}),
  });
}

/** An accelerate config YAML (a YAML file with `num_processes` and `gpu_ids`): more processes per machine than `gpu_ids`. */
function checkAccelerateYaml(ctx: ManifestRuleContext): void {
  for (const { doc, broken } of ctx.manifest.documents) {
    const root = doc.contents;
    if (broken || !isMap(root) || valueOf(root, "apiVersion")) continue;
    const np = pairOf(root, "num_processes");
    const ids = idList(scalarText(valueOf(root, "gpu_ids")));
    const total = wholeNumber(scalarText(np?.value));
    if (!np || !ids || total === null) continue;
    const machines = wholeNumber(scalarText(valueOf(root, "num_machines"))) ?? 1;
    if (machines < 1) continue;
    const perNode = Math.floor(total / machines);
    if (perNode <= ids.length) continue;
    const v = np.value as { range?: [number, number, number] };
    const idsNode = valueOf(root, "gpu_ids") as { range?: [number, number, number] } | null;
    const src = ctx.manifest.src;
    ctx.report({
      range: src.range((np.key as { range?: [number, number, number] }).range?.[0] ?? 0, v.range?.[1] ?? 0),
      message: `num_processes: ${total}${machines > 1 ? ` on ${machines} machines (${perNode} per machine)` : ""} but gpu_ids lists ${plural(ids.length, "GPU")}: accelerate launch sets CUDA_VISIBLE_DEVICES to gpu_ids and starts ${perNode} workers per machine, so LOCAL_RANK ${ids.length}${perNode - ids.length > 1 ? `..${perNode - 1}` : ""} ${perNode - ids.length > 1 ? "have no GPU of their own" : "has no GPU of its own"} ('invalid device ordinal' when selected, or ranks sharing a GPU make NCCL fail)`,
      ...(idsNode?.range
        ? { related: [{ range: src.range(idsNode.range[0], idsNode.range[1]), message: "gpu_ids" }] }
        : {}),
    });
  }
}
