import type { Rule } from "../rule";
import type { ShellWord } from "../manifests/shell";
import { jobScriptOf, wordsRange, GRES_DOC, SBATCH_DOC } from "./shared/jobScript";

const VAR = "CUDA_VISIBLE_DEVICES";
const EXPORTERS = new Set(["export", "declare", "typeset", "readonly"]);

/** GPU021: a Slurm job script that asks for GPUs sets CUDA_VISIBLE_DEVICES itself. */
export const rule: Rule = {
  meta: {
    code: "GPU021",
    name: "job-script-sets-visible-devices",
    severity: "warning",
    fixable: false,
    docs: {
      what: "Reports `CUDA_VISIBLE_DEVICES=...` and `export CUDA_VISIBLE_DEVICES=...` (also as a prefix of one command) in a Slurm job script that asks Slurm for GPUs (`--gres=gpu...`, `--gpus`, `--gpus-per-node`, `--gpus-per-task`).",
      why: "Slurm sets `CUDA_VISIBLE_DEVICES` for the job and for each job step to the GPUs it allocated on that node; with device cgroups those are renumbered from 0 (a job given `/dev/nvidia1` sees `CUDA_VISIBLE_DEVICES=0`). A value written in the script replaces that binding for every step: tasks that should each get their own GPU all see the same list (NCCL then stops with 'Duplicate GPU detected'), and without cgroups ids chosen in the script can be GPUs allocated to another job on the same node.",
      example: "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gres=gpu:4\n\nexport CUDA_VISIBLE_DEVICES=0,1,2,3   # GPU021: Slurm already set it\ntorchrun --nproc_per_node=4 train.py\n",
      fix: "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gres=gpu:4\n\ntorchrun --nproc_per_node=4 train.py\n",
      whenNotToCare: "A script that asks Slurm for no GPU (a whole node taken with `--exclusive` on a cluster without GPU GRES) is not reported: there Slurm sets nothing. A value built from `$CUDA_VISIBLE_DEVICES` itself (picking from what Slurm gave) is not reported. Commands inside `bash -c '...'` strings are not read.",
      references: [
        `${GRES_DOC}: "the environment variable CUDA_VISIBLE_DEVICES is set for each job step to determine which GPUs are available for its use on each node"; with cgroups a job allocated /dev/nvidia1 gets CUDA_VISIBLE_DEVICES=0`,
        `${SBATCH_DOC}: --gres, --gpus, --gpus-per-node, --gpus-per-task request GPUs`,
        "NCCL troubleshooting: 'Duplicate GPU detected' when two ranks use the same device (https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html)",
      ],
      language: "bash",
    },
  },
  check: () => undefined,
  checkManifest(ctx) {
    const job = jobScriptOf(ctx);
    if (!job || !job.request.asksForGpus) return;
    const asked = job.request.where;
    const report = (word: ShellWord, value: string, how: string) => {
      if (value.includes(VAR)) return; // chosen from what Slurm set
      ctx.report({
        range: wordsRange(ctx, word),
        message: `${how} CUDA_VISIBLE_DEVICES=${value} in a job script that asks Slurm for GPUs: Slurm sets CUDA_VISIBLE_DEVICES for the job and each step to the GPUs it allocated (renumbered from 0 under device cgroups), and this value replaces that binding, so tasks meant to get their own GPU share one list (NCCL: "Duplicate GPU detected")`,
        ...(asked ? { related: [{ range: asked.range, message: "the GPUs asked of Slurm" }] } : {}),
      });
    };
    for (const c of job.commands) {
      for (const a of c.assignments) if (a.name === VAR) report(a.word, a.value, "sets");
      const first = c.words[0]?.value;
      if (first && EXPORTERS.has(first)) {
        for (const w of c.words.slice(1)) if (w.value.startsWith(`${VAR}=`)) report(w, w.value.slice(VAR.length + 1), "exports");
      }
    }
  },
};
