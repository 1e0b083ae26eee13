import type { ManifestRule, ManifestRuleContext } from "../rule";
import type { ShellWord } from "../manifests/shell";
import { resolveLiteral } from "../manifests/jobscript";
import { launchedScriptFacts, launchedScriptText as scriptText } from "../launch/script";
import { launchesOf } from "../launch/sources";
import { LAUNCHER_NAME, type Launcher } from "../launch/commandLine";
import { mentionsLauncher } from "../manifests/prefilter";

const TORCHRUN_DOC =
  "torchrun (https://pytorch.org/docs/stable/elastic/run.html), usage: `torchrun [--nnodes ...] [--nproc-per-node ...] ... training_script [training_script_args ...]`; the arguments after the script are the script's";
const DEEPSPEED_DOC =
  'DeepSpeed, deepspeed/launcher/runner.py (microsoft/DeepSpeed): `parser.add_argument("user_script", ...)` then `parser.add_argument(\'user_args\', nargs=argparse.REMAINDER)`: every word after the script goes to it; without `--include`/`--num_gpus` the runner uses every GPU of the node (DeepSpeed Getting Started, Resource Configuration: "By default, DeepSpeed will use all available GPUs")';
const ACCELERATE_DOC =
  "Accelerate, The Command Line (https://huggingface.co/docs/accelerate/package_reference/cli): `accelerate launch [arguments] {training_script} --{training_script-argument-1} ...`";
const COLOSSALAI_DOC =
  'ColossalAI, colossalai/cli/launcher/__init__.py (hpcaitech/ColossalAI 4f9953be): `@click.argument("user_script")` then `@click.argument("user_args", nargs=-1)`';

/**
 * Options of each launcher that configure the launch itself (how many processes, which GPUs,
 * which nodes), by spelling. Written after the script, they reach the script instead.
 * torchrun: torch/distributed/run.py; deepspeed: deepspeed/launcher/runner.py; accelerate:
 * accelerate/commands/launch.py; colossalai: colossalai/cli/launcher/__init__.py.
 */
const LAUNCH_OPTIONS: Record<Exclude<Launcher, "other" | "vllm">, readonly string[]> = {
  torchrun: [
    "--nproc_per_node",
    "--nproc-per-node",
    "--nnodes",
    "--node_rank",
    "--node-rank",
    "--standalone",
    "--rdzv_endpoint",
    "--rdzv-endpoint",
    "--rdzv_backend",
    "--rdzv-backend",
    "--master_addr",
    "--master-addr",
    "--master_port",
    "--master-port",
  ],
  deepspeed: ["--include", "--exclude", "--num_gpus", "--num_accelerators", "--num_nodes", "--hostfile"],
  accelerate: [
    "--num_processes",
    "--num-processes",
    "--num_machines",
    "--num-machines",
    "--gpu_ids",
    "--gpu-ids",
    "--multi_gpu",
    "--multi-gpu",
    "--machine_rank",
    "--machine-rank",
    "--main_process_port",
    "--main-process-port",
  ],
  colossalai: ["--nproc_per_node", "--include", "--exclude", "--num_nodes", "--hostfile", "--host"],
};
const DEFAULT_EFFECT: Record<Exclude<Launcher, "other" | "vllm">, string> = {
  torchrun: "torchrun uses its defaults (one process, a single node)",
  deepspeed: "deepspeed uses its defaults (a process on every GPU of the node)",
  accelerate: "accelerate uses its defaults (its config file, else one process)",
  colossalai: "colossalai run uses its defaults",
};

/**
 * Whether the script names the option (`--num_gpus` as `num_gpus` or `num-gpus`) in its code
 * (launch/script.ts LaunchedScriptFacts.words: identifiers and words of string literals): it may
 * take it itself. True when the script could not be read as Python.
 */
function scriptNames(text: string, option: string): boolean {
  const words = launchedScriptFacts(text).words;
  if (!words) return true;
  const bare = option.replace(/^-+/, "");
  return [bare, bare.replace(/-/g, "_"), bare.replace(/_/g, "-")].some((n) => words.has(n));
}

/** GPU042: a launcher's own option written after the script, where it goes to the script. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU042",
    name: "launcher-option-after-script",
    severity: "warning",
    fixable: false,
    // A launcher in a container's command (compose, Kubernetes).
    trigger: (t) => mentionsLauncher(t),
    docs: {
      what: "Reads launch command lines (`torchrun`, `python -m torch.distributed.run|launch`, `deepspeed`, `accelerate launch`, `colossalai run`) in shell scripts, Slurm job scripts, Dockerfiles, compose files and Kubernetes manifests, and reports an option of the launcher itself (`--nproc_per_node`, `--nnodes`, `--include`, `--num_gpus`, `--num_processes`, `--gpu_ids`, ...) written after the training script, when the script is a file of the project that does not name that option.",
      follows:
        "Launch lines in the file itself (shell and job scripts, a Dockerfile's `CMD`/`ENTRYPOINT`, compose and Kubernetes commands), with a `$VAR` assigned once to a literal (a variable among the launcher's options that is not known is passed over when a `.py` file follows it or it is an array's: `torchrun $DISTRIBUTED_ARGS pretrain.py --nnodes 2` starts pretrain.py), and the text of the launched `.py` script, read beside the launching file or up to three folders above it. Not followed: a module run with `-m`, a script path held in another variable or not found there, words after `--`, and an option the script takes through a parser in another module (the script's own code must name the option: an identifier or a word of a string literal, comments left out). A notebook's shell lines (`!torchrun ...`, `!CUDA_VISIBLE_DEVICES=3 python x.py`) are read as such a script, in the cells' order, with the kernel's `%env` settings before them as exports (IPython runs each `!` line in a shell of its own that inherits the kernel's environment: a `!export` or a bare `!N=8` reaches no other line); findings sit on the cell's line.",
      why: "Each of these launchers takes its own options before the script and hands every word after the script to the script: torchrun's usage is `torchrun [options] training_script [training_script_args ...]`, DeepSpeed's runner declares `user_args` with `argparse.REMAINDER` after `user_script`, accelerate's is `accelerate launch [arguments] {training_script} --{training_script-argument-1}`, and colossalai run's `user_args` follows `user_script`. So `deepspeed train.py --include localhost:0,1` starts a process on every GPU of the node (DeepSpeed's default) and passes `--include` to train.py, which rejects it or ignores it.",
      example:
        "#!/bin/bash\ndeepspeed train.py --include localhost:0,1 --deepspeed ds.json   # GPU042: --include goes to train.py\n",
      fix: "#!/bin/bash\ndeepspeed --include localhost:0,1 train.py --deepspeed ds.json\n",
      whenNotToCare:
        'When the script takes an option of the same name for itself: the rule is silent when the script\'s code names the option (an identifier `num_gpus`, or a string such as `"--num-gpus"`; a comment does not count), and when the script is not a `.py` file of the project it can read (a module run with `-m`, a path in a variable, a script elsewhere). Words after `--` are not read.',
      references: [TORCHRUN_DOC, DEEPSPEED_DOC, ACCELERATE_DOC, COLOSSALAI_DOC],
      language: "bash",
    },
  },
  checkManifest(ctx) {
    const literals = ctx.manifest.jobscript?.literals ?? new Map<string, string>();
    for (const f of launchesOf(ctx.manifest)) {
      const l = f.line;
      // vLLM's server starts no script (its options are its own: GPU040 reads its sizes).
      if (l.launcher === "other" || l.launcher === "vllm" || !l.script) continue;
      const late = lateOptions(l.launcher, l.scriptArgs);
      if (!late.length) continue;
      const text = scriptText(ctx.file, resolveLiteral(l.script.value, literals) ?? "$", ctx.read);
      if (text === null) continue;
      for (const w of late) {
        const option = w.value.split("=")[0];
        if (scriptNames(text, option)) continue;
        report(ctx, l.launcher, w, option, l.script.value);
      }
    }
  },
};

/** The words after the script that are the launcher's own options (up to a `--`). */
function lateOptions(launcher: Exclude<Launcher, "other" | "vllm">, args: readonly ShellWord[]): ShellWord[] {
  const out: ShellWord[] = [];
  for (const w of args) {
    if (w.value === "--") break;
    if (LAUNCH_OPTIONS[launcher].includes(w.value.split("=")[0])) out.push(w);
  }
  return out;
}

function report(
  ctx: ManifestRuleContext,
  launcher: Exclude<Launcher, "other" | "vllm">,
  w: ShellWord,
  option: string,
  script: string,
): void {
  ctx.report({
    range: ctx.manifest.src.range(w.start, w.end),
    message: `${option} comes after the script ${script}, so ${LAUNCHER_NAME[launcher]} passes it to ${script} (which does not name it) instead of reading it: ${DEFAULT_EFFECT[launcher]}; write it before ${script}`,
  });
}
