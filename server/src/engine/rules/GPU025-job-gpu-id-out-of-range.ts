import type { ManifestRule } from "../rule";
import type { ShellWord } from "../manifests/shell";
import { launchOf, resolveLiteral } from "../manifests/jobscript";
import { jobScriptOf, wordsRange, GRES_DOC, SBATCH_DOC } from "./shared/jobScript";

/** Options whose value is one GPU id (`--device 3`, `--gpu_id=3`). */
const ID_OPTIONS = new Set([
  "--gpu_id",
  "--gpu-id",
  "--gpu_ids",
  "--gpu-ids",
  "--device_id",
  "--device-id",
  "--device_ids",
  "--device-ids",
  "--device",
  "--cuda_device",
  "--cuda-device",
  "--gpu",
]);
/** Options whose value is a count when a single number and ids when a list (`--gpus 4` vs `--gpus 0,1`). */
const LIST_OPTIONS = new Set(["--gpus", "--devices"]);

/** GPU ids in an option value: `3`, `0,1,3`, `cuda:3`; null when it is none of these. */
function idsOf(value: string, single: boolean): number[] | null {
  const m = /^cuda:([0-9]+)$/.exec(value);
  if (m) return [Number(m[1])];
  if (/^[0-9]+(?:,[0-9]+)+,?$/.test(value)) return value.split(",").filter(Boolean).map(Number);
  if (single && /^[0-9]+$/.test(value)) return [Number(value)];
  return null;
}

/** GPU025: a GPU id written in a job script that is not among the GPUs Slurm gives the step. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU025",
    name: "job-gpu-id-out-of-range",
    severity: "warning",
    fixable: false,
    // Reports on job scripts only (rules/shared/jobScript.ts `jobScriptOf`), never on a YAML manifest.
    trigger: () => false,
    docs: {
      what: "In a Slurm job script that asks for N GPUs per node (or per task), reports a GPU id written in a `python`/`torchrun` command line (`--device cuda:3`, `--gpu_ids 4,5`, `--gpus 0,1,2,3,4`) that is N or more.",
      follows:
        "The job script itself: the GPUs per node (or per task) its `#SBATCH` lines ask for, and the GPU-id options of its `python` and `torchrun` lines (also under `srun`), with a `$VAR` assigned once to a literal in the script. Not followed: ids computed by the shell or passed in by the caller, configuration files the program reads, srun steps that ask for GPUs of their own (skipped), and what the program does with the option.",
      why: "Inside a job, CUDA numbers only the GPUs Slurm allocated, from 0: Slurm sets CUDA_VISIBLE_DEVICES to the job's GPUs (renumbered from 0 under device cgroups), and CUDA then calls the first visible GPU device 0. A job that asked for 2 GPUs has device ordinals 0 and 1 whatever the node's GPUs are numbered, so an id written for a workstation (`--gpu_ids 4,5`) names a device that does not exist and CUDA fails with 'invalid device ordinal'.",
      example:
        "#!/bin/bash\n#SBATCH --gres=gpu:2\n\npython train.py --gpu_ids 2,3   # GPU025: the job's GPUs are 0 and 1\n",
      fix: "#!/bin/bash\n#SBATCH --gres=gpu:2\n\npython train.py --gpu_ids 0,1\n",
      whenNotToCare:
        "Ids below N are right (0..N-1 are the job's GPUs) and are not reported. `--gpus 4` and `--devices 4` alone are read as counts, not ids. Values from variables are not read unless assigned once in the script to a literal.",
      references: [
        `${GRES_DOC}: CUDA_VISIBLE_DEVICES is set for each job step; a job allocated /dev/nvidia1 gets CUDA_VISIBLE_DEVICES=0 ("the first GPU device visible to the job")`,
        "CUDA C++ Programming Guide, CUDA Environment Variables: CUDA_VISIBLE_DEVICES, only the devices whose index is in the sequence are visible to CUDA applications and they are enumerated in the order of the sequence (https://docs.nvidia.com/cuda/cuda-c-programming-guide/#cuda-environment-variables)",
        `${SBATCH_DOC}: --gres, --gpus-per-node, --gpus-per-task`,
      ],
      language: "bash",
    },
  },
  checkManifest(ctx) {
    const job = jobScriptOf(ctx);
    if (!job || !job.request.asksForGpus) return;
    const req = job.request;
    for (const c of job.commands) {
      const l = launchOf(c);
      if (l.program === "other") continue;
      if (l.srun && ["gres", "gpus", "gpus-per-node", "gpus-per-task", "G"].some((n) => l.srun!.options.has(n)))
        continue;
      const visible = l.srun && req.gpusPerTask !== null ? req.gpusPerTask : req.gpusPerNode;
      if (visible === null) continue;
      const check = (start: ShellWord, end: ShellWord, raw: string, single: boolean) => {
        const value = resolveLiteral(raw, job.literals);
        const ids = value === null ? null : idsOf(value, single);
        const bad = ids?.filter((i) => i >= visible) ?? [];
        if (!bad.length) return;
        ctx.report({
          range: wordsRange(ctx, start, end),
          message: `GPU id${bad.length > 1 ? "s" : ""} ${bad.join(", ")} ${bad.length > 1 ? "are" : "is"} not among the job's GPUs: the job asks Slurm for ${visible} GPU${visible === 1 ? "" : "s"}${l.srun && req.gpusPerTask !== null ? " per task" : " per node"}, which CUDA numbers 0${visible > 1 ? `..${visible - 1}` : ""} inside the job whatever the node calls them ("invalid device ordinal")`,
          ...(req.where ? { related: [{ range: req.where.range, message: "the GPUs asked of Slurm" }] } : {}),
        });
      };
      const words = l.words;
      for (let k = 1; k < words.length; k++) {
        const v = words[k].value;
        const eq = v.indexOf("=");
        const name = eq > 0 ? v.slice(0, eq) : v;
        const single = ID_OPTIONS.has(name);
        if (!single && !LIST_OPTIONS.has(name)) continue;
        if (eq > 0) check(words[k], words[k], v.slice(eq + 1), single);
        else if (k + 1 < words.length) check(words[k], words[k + 1], words[k + 1].value, single);
      }
    }
  },
};
