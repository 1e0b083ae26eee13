import type { ManifestRule, ManifestRuleContext } from "../rule";
import type { ShellCommand } from "../manifests/shell";
import type { JobScriptFacts } from "../manifests/jobscript";
import { launchOf, optionAsksForGpus as asksForGpus, resolveLiteral } from "../manifests/jobscript";
import { parseLaunchLine } from "../launch/commandLine";
import { literalsWithSourced } from "../launch/sources";
import { launchedScript } from "../launch/script";
import { cudaRequired } from "../launch/cudaRequired";
import { jobScriptOf, wordsRange, GRES_DOC, SBATCH_DOC, SRUN_DOC } from "./shared/jobScript";

const MEASURED = "test/fixtures/slurm/gres-devices/measured.md";

/**
 * Whether the job asks for GPUs anywhere: an `#SBATCH` line (also one Slurm ignores, after the
 * first command: the author meant GPUs), or the options of any `srun`, `salloc` or `sbatch` command
 * of the script. An option word that expands a variable (`srun $SRUN_ARGS`) may ask for them.
 */
function jobAsksForGpus(job: JobScriptFacts): boolean {
  for (const d of [...job.directives, ...job.ignoredDirectives])
    for (const o of d.options) if (asksForGpus(o.name, o.value)) return true;
  for (const c of job.commands) if (commandAsksForGpus(c)) return true;
  return false;
}

/** An `srun`/`salloc`/`sbatch` command whose options (the words before the program) ask for GPUs, or may. */
function commandAsksForGpus(c: ShellCommand): boolean {
  const first = c.words[0]?.value.replace(/^.*\//, "");
  if (first !== "srun" && first !== "salloc" && first !== "sbatch") return false;
  const launch = launchOf({ ...c, words: [{ ...c.words[0], value: "srun" }, ...c.words.slice(1)] });
  const options = launch.srun?.options ?? new Map();
  // A bare `$ARGS` among the options (or where the program should be) may hold a GPU request;
  // an expansion that is the value of a named option (`--jobid $SLURM_JOB_ID`) holds none.
  const values = new Set([...options.values()].map((o) => o.word.start));
  const optionWords = c.words.slice(1, c.words.length - launch.words.length);
  if (optionWords.some((w) => w.value.startsWith("$") && !values.has(w.start))) return true;
  if (launch.words[0]?.value.startsWith("$")) return true;
  for (const [name, o] of options) if (asksForGpus(name, o.value)) return true;
  return false;
}

/** GPU060: a Slurm job script starts a Python program that needs CUDA, and the job asks for no GPU. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU060",
    name: "job-starts-cuda-without-gpus",
    severity: "warning",
    fixable: false,
    preview: true,
    // Reports on job scripts only (rules/shared/jobScript.ts `jobScriptOf`), never on a YAML manifest.
    trigger: () => false,
    docs: {
      what: 'In a Slurm job script (a script with `#SBATCH` lines) that asks for no GPU, reports the `srun python x.py` (or batch-step `python x.py`) line that starts a Python file of the project which needs CUDA whatever happens: on the path it runs when started (module level, the `if __name__ == "__main__":` block, and the bodies of its own functions called from there), outside any condition, it stops without CUDA (`if not torch.cuda.is_available(): raise ...` or `sys.exit(...)`, `assert torch.cuda.is_available()`) or puts work on CUDA (`.cuda()`, `.to("cuda")`, also on the result of a torch call such as `nn.Linear(4, 4).cuda()`, `device="cuda"`, `torch.cuda.set_device(...)`) or chooses a CUDA device (`torch.device("cuda")`). Asking for GPUs is any of `--gres=gpu...` (any type), `--gpus`/`-G`, `--gpus-per-node`, `--gpus-per-task`, `--gpus-per-socket`, `--tres-per-task=gres/gpu...`, on an `#SBATCH` line or on any `srun`, `salloc` or `sbatch` command of the script.',
      follows:
        'The job script\'s `#SBATCH` lines (also those after the first command), the options of its `srun`/`salloc`/`sbatch` commands, its `python [options] x.py` commands (also under `srun`), with a `$VAR` assigned once to a literal in the script or a file it sources, and the started `.py` file (beside the job script or up to three folders above it) read with its parse: its module level, its `__main__` block and the bodies of its module-level functions called unconditionally from them, one level deep. Not followed: the options the job is submitted with (`sbatch --gpus=1 job.sh`), site defaults that add GPUs (a job-submit plugin, a partition\'s defaults), `--partition` and `--constraint` (a GPU partition does not give GPUs by itself), `python -m module`, launchers (`torchrun`, `accelerate`, `deepspeed`), programs started through another script, CUDA used in modules the file imports or deeper in its functions, and uses under any `if`, `try`, `while`, conditional expression or `and`/`or` (`"cuda" if torch.cuda.is_available() else "cpu"` is not reported). An `srun` option word that expands a variable (`srun $ARGS python x.py`) may ask for GPUs: silent.',
      why: `Slurm gives a job or step the GPUs it asks for and no others. Where GPUs are generic resources (GRES, gres.conf \`File=/dev/nvidia...\`) and devices are constrained (cgroup.conf \`ConstrainDevices=yes\`, as GPU clusters do to keep jobs apart), a job that asks for none cannot open any GPU device, even on a node of a GPU partition: measured on Slurm 22.05.8 with device cgroups (${MEASURED}), the batch step and the srun step of a job without a GPU request were refused both GPUs ('Operation not permitted') with CUDA_VISIBLE_DEVICES unset, while the same job with \`--gpus-per-node=1\` (or \`srun --gres=gpu:1\`) got one, CUDA_VISIBLE_DEVICES=0. The program then sees no CUDA device: its \`torch.cuda.is_available()\` is False, and its first CUDA use raises (GoogleCloudPlatform/cluster-toolkit#2634: an srun on an A100 partition without --gpus saw no CUDA device; the maintainers' answer was to ask for them).`,
      example:
        "#!/bin/bash\n#SBATCH --partition=gpu\n#SBATCH --nodes=1\n\nsrun python train.py --gpu 0   # GPU060: train.py calls torch.cuda.set_device, the job asks for no GPU\n",
      fix: "#!/bin/bash\n#SBATCH --partition=gpu\n#SBATCH --nodes=1\n#SBATCH --gpus-per-node=1\n\nsrun python train.py --gpu 0\n",
      whenNotToCare:
        "A preview rule, for lack of findings to measure it on: on 2026-12-07, over the job scripts of 304 public repositories (by a text search, about 150 of their job scripts start `python x.py` and ask for no GPU), it reported once (Kristoff-starling/SparseCode@53711f14 run.sbatch:10, a job on an AMD MI210 partition that likely gives whole nodes: site-dependent, as below); 20 findings are needed to measure it. At sites that do not constrain devices (cgroup.conf's ConstrainDevices defaults to `no`), or that give whole nodes without managing GPUs as GRES, a step that asks for none still sees every GPU of the node (measured: without device cgroups nothing stops it; Slurm leaves CUDA_VISIBLE_DEVICES unset), so the job works there, and it breaks when moved to a cluster that constrains. Also silent-worthy: jobs always submitted with GPU options on the command line (`sbatch --gres=gpu:1 job.sh`) or on a cluster whose submit plugin adds them; say so with `# noqa: GPU060` on the line, or better, put the request in the script. No quick fix: the number of GPUs and the way to ask (`--gpus-per-node`, `--gpus-per-task`, a GRES type) depend on the program and the cluster, and a request changes where and when the job runs.",
      references: [
        `Measured: ${MEASURED} (Slurm 22.05.8, task/cgroup, ConstrainDevices=yes: no GPU request, both devices refused; --gpus-per-node=1, one device, CUDA_VISIBLE_DEVICES=0)`,
        'cgroup.conf(5), Slurm 22.05 (Debian 12 `slurm-client`; https://slurm.schedmd.com/cgroup.conf.html): ConstrainDevices=<yes|no> "If configured to "yes" then constrain the job\'s allowed devices based on GRES allocated resources. It uses the devices subsystem for that. The default value is "no"."',
        "gres.conf(5), Slurm 22.05, File: \"Enforcement of the file allocation relies upon Linux Control Groups (cgroups) and Slurm's task/cgroup plugin, which will place the allocated files into the job's cgroup and prevent use of other files.\" (https://slurm.schedmd.com/gres.conf.html)",
        `${GRES_DOC}: GPUs are allocated to jobs and steps that request them (--gpus, --gres=gpu, ...); Slurm sets CUDA_VISIBLE_DEVICES for the allocated GPUs`,
        `${SBATCH_DOC} and ${SRUN_DOC}: --gres, --gpus, --gpus-per-node, --gpus-per-task, --gpus-per-socket, --tres-per-task`,
        "GoogleCloudPlatform/cluster-toolkit#2634: on an A2 (A100) partition, srun without --gpus saw no CUDA device; fixed by asking with --gpus / --gpus-per-node",
      ],
      language: "bash",
    },
  },
  checkManifest(ctx) {
    const job = jobScriptOf(ctx);
    if (!job || !ctx.file || jobAsksForGpus(job)) return;
    let literals: Map<string, string> | null = null;
    for (const c of job.commands) {
      const line = parseLaunchLine(c.words, c.assignments);
      if (line.launcher !== "other" || !line.script || !line.words[0] || !/python[0-9.]*$/.test(line.words[0].value))
        continue;
      literals ??= literalsWithSourced(ctx.file, job, ctx.read);
      const path = resolveLiteral(line.script.value, literals);
      const launched = path === null ? null : launchedScript(ctx.file, path, ctx.read);
      const need = launched && cudaRequired(launched.text);
      if (need) report(ctx, c, line.script, path!, need);
    }
  },
};

function report(
  ctx: ManifestRuleContext,
  c: ShellCommand,
  script: ShellCommand["words"][number],
  path: string,
  need: NonNullable<ReturnType<typeof cudaRequired>>,
): void {
  const name = path.replace(/^.*\//, "");
  const how = c.words[0].value.replace(/^.*\//, "") === "srun" ? "srun starts" : "The batch step runs";
  const what = {
    stops: "stops without CUDA",
    uses: "puts work on CUDA unconditionally",
    chooses: "chooses a CUDA device unconditionally",
  }[need.kind];
  ctx.report({
    range: wordsRange(ctx, c.words[0], script),
    message: `${how} ${name}, which ${what} (${name}:${need.line + 1}: \`${need.code}\`), but the job asks Slurm for no GPU (no --gpus, --gres=gpu, --gpus-per-node or --gpus-per-task in the #SBATCH lines or on srun): where GPUs are GRES and devices are constrained (cgroup.conf ConstrainDevices=yes), the step sees no GPU even on a GPU node; ask for them, e.g. #SBATCH --gpus-per-node=1`,
    related: [{ range: wordsRange(ctx, script), message: `${name}:${need.line + 1} needs CUDA: ${need.code}` }],
  });
}
