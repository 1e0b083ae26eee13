import type { ManifestRule } from "../rule";
import type { ShellCommand, ShellWord } from "../manifests/shell";
import { jobScriptOf, wordsRange, GRES_DOC, SBATCH_DOC } from "./shared/jobScript";

const VAR = "CUDA_VISIBLE_DEVICES";
const EXPORTERS = new Set(["export", "declare", "typeset", "readonly"]);
/**
 * Shell builtins and utilities that start no GPU program: an export followed in the batch step only
 * by these (and srun steps, which get Slurm's own CUDA_VISIBLE_DEVICES) has no effect.
 */
const NO_GPU_PROGRAMS = new Set([
  "echo",
  "printf",
  "cd",
  "pushd",
  "popd",
  "mkdir",
  "rm",
  "cp",
  "mv",
  "ln",
  "scp",
  "rsync",
  "make",
  "cmake",
  "export",
  "unset",
  "set",
  "shopt",
  "source",
  ".",
  "module",
  "ml",
  "conda",
  "mamba",
  "date",
  "hostname",
  "sleep",
  "cat",
  "tee",
  "touch",
  "ls",
  "pwd",
  "exit",
  "return",
  "true",
  "false",
  "test",
  "[",
  "[[",
  "wait",
  "trap",
  "ulimit",
  "umask",
  "scontrol",
  "squeue",
  "sinfo",
  "git",
  "wget",
  "curl",
  "tar",
  "chmod",
  "awk",
  "sed",
  "grep",
  "head",
  "tail",
  "wc",
  "sort",
  "cut",
  "tr",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "whoami",
  "id",
  "local",
  "declare",
  "shift",
  "read",
  "let",
  "nproc",
  "free",
  "df",
  "du",
  "find",
  "seq",
  "nvidia-smi",
]);

/** GPU021: a Slurm job script that asks for GPUs sets CUDA_VISIBLE_DEVICES itself. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU021",
    name: "job-script-sets-visible-devices",
    severity: "warning",
    fixable: false,
    // Reports on job scripts only (rules/shared/jobScript.ts `jobScriptOf`), never on a YAML manifest.
    trigger: () => false,
    docs: {
      what: "Reports `CUDA_VISIBLE_DEVICES=...` and `export CUDA_VISIBLE_DEVICES=...` (also as a prefix of one command) in a Slurm job script that asks Slurm for GPUs (`--gres=gpu...`, `--gpus`, `--gpus-per-node`, `--gpus-per-task`).",
      follows:
        "The job script itself: its `#SBATCH` lines (whether it asks for GPUs) and its simple commands, also those inside `if`, loops, `case` and shell functions, for `CUDA_VISIBLE_DEVICES=` prefixes, assignments and exports, and for the commands that run after an export. Not followed: scripts it sources or runs, text inside `bash -c '...'`, `$(...)` and here-documents, and what the programs it starts do with the variable.",
      why: "Slurm sets `CUDA_VISIBLE_DEVICES` for the job to the GPUs it allocated on the node, and again for each srun step. Measured on Slurm 22.05.8 (single node, four GPUs, no device cgroups; test/fixtures/slurm/measured.md): a job given GPUs 2 and 3 while another job held 0 and 1 got `CUDA_VISIBLE_DEVICES=2,3`; after `export CUDA_VISIBLE_DEVICES=0,1` the batch script's own commands saw `0,1`, the other job's GPUs, while `srun` steps still got `2,3` (an export or a `CUDA_VISIBLE_DEVICES=1 srun ...` prefix has no effect on a step). So the setting is either wrong (commands run in the batch script, without device cgroups) or does nothing (srun steps). With device cgroups the job's GPUs are renumbered from 0 and ids outside the allocation are not visible at all.",
      example:
        "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gres=gpu:4\n\nexport CUDA_VISIBLE_DEVICES=0,1,2,3   # GPU021: Slurm already set it to the job's GPUs\ntorchrun --nproc_per_node=4 train.py\n",
      fix: "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gres=gpu:4\n\ntorchrun --nproc_per_node=4 train.py\n",
      whenNotToCare:
        "A prefix on an `srun` command only (`CUDA_VISIBLE_DEVICES=0 srun ...`) is reported as information: it has no effect; so is an export after which the batch step runs only srun steps and shell utilities (echo, make, scp, ...). A script that asks Slurm for no GPU (a whole node taken with `--exclusive` on a cluster without GPU GRES) is not reported: there Slurm sets nothing. A value built from `$CUDA_VISIBLE_DEVICES` itself (picking from what Slurm gave) is not reported. Commands inside `bash -c '...'` strings are not read.",
      references: [
        `${GRES_DOC}: "the environment variable CUDA_VISIBLE_DEVICES is set for each job step to determine which GPUs are available for its use on each node"; with cgroups a job allocated /dev/nvidia1 gets CUDA_VISIBLE_DEVICES=0`,
        `${SBATCH_DOC}: --gres, --gpus, --gpus-per-node, --gpus-per-task request GPUs`,
        "Measured: test/fixtures/slurm/measured.md (Slurm 22.05.8 from Debian 12, the recipe of ../shared/slurm-host.md)",
      ],
      language: "bash",
    },
  },
  checkManifest(ctx) {
    const job = jobScriptOf(ctx);
    if (!job || !job.request.asksForGpus) return;
    const asked = job.request.where;
    const report = (word: ShellWord, value: string, how: string, srunOnly: boolean) => {
      if (value.includes(VAR)) return; // chosen from what Slurm set
      const related = asked ? { related: [{ range: asked.range, message: "the GPUs asked of Slurm" }] } : {};
      if (srunOnly) {
        ctx.report({
          range: wordsRange(ctx, word),
          severity: "information",
          message: `CUDA_VISIBLE_DEVICES=${value} before srun has no effect: Slurm sets CUDA_VISIBLE_DEVICES for the srun step itself, to the step's GPUs (measured on Slurm 22.05)`,
          ...related,
        });
        return;
      }
      ctx.report({
        range: wordsRange(ctx, word),
        message: `${how} CUDA_VISIBLE_DEVICES=${value} in a job script that asks Slurm for GPUs: Slurm already set it to the GPUs it allocated, so the batch script's commands now pick GPUs by this fixed list, which without device cgroups can be another job's GPUs (measured: a job given GPUs 2,3 then used 0,1), while srun steps get Slurm's value anyway`,
        ...related,
      });
    };
    for (const c of job.commands) {
      const first = c.words[0]?.value;
      const isSrun = first?.replace(/^.*\//, "") === "srun";
      for (const a of c.assignments) if (a.name === VAR) report(a.word, a.value, "sets", isSrun);
      if (first && EXPORTERS.has(first)) {
        for (const w of c.words.slice(1)) {
          if (!w.value.startsWith(`${VAR}=`)) continue;
          const value = w.value.slice(VAR.length + 1);
          if (onlySrunAfter(job.commands, c)) {
            if (value.includes(VAR)) continue;
            ctx.report({
              range: wordsRange(ctx, w),
              severity: "information",
              message: `exports CUDA_VISIBLE_DEVICES=${value} but no command of the batch step after it runs a program that uses GPUs, and Slurm sets CUDA_VISIBLE_DEVICES for each srun step itself (measured on Slurm 22.05): the export has no effect`,
              ...(asked ? { related: [{ range: asked.range, message: "the GPUs asked of Slurm" }] } : {}),
            });
          } else report(w, value, "exports", false);
        }
      }
    }
  },
};

/**
 * Whether every command after `exportCmd` is an srun step or a shell utility of
 * {@link NO_GPU_PROGRAMS}, with at least one srun step: the batch step then starts no GPU program
 * that the export could steer (ecosystem: karpathy/llm.c multi-node scripts).
 */
function onlySrunAfter(commands: readonly ShellCommand[], exportCmd: ShellCommand): boolean {
  let sruns = 0;
  for (const c of commands) {
    if (c.start <= exportCmd.end || c.words.length === 0) continue;
    const program = c.words[0].value.replace(/^.*\//, "");
    if (program === "srun") {
      sruns++;
      continue;
    }
    if (!NO_GPU_PROGRAMS.has(program)) return false;
  }
  return sruns > 0;
}
