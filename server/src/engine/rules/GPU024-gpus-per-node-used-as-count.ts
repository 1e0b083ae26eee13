import type { ManifestRule } from "../rule";
import type { ShellCommand, ShellWord } from "../manifests/shell";
import { jobScriptOf, wordsRange, SBATCH_DOC } from "./shared/jobScript";

const VAR = "SLURM_GPUS_PER_NODE";
const REF = /^\$(?:\{SLURM_GPUS_PER_NODE\}|SLURM_GPUS_PER_NODE)$/;
/** Options whose value is a number of processes or GPUs. */
const COUNT_OPTIONS = [
  "--nproc_per_node",
  "--nproc-per-node",
  "--num_processes",
  "--num-processes",
  "--num_gpus",
  "--num-gpus",
  "--ntasks-per-node",
  "--gpus",
  "--devices",
  "--ngpus",
  "--n_gpus",
  "--world_size",
  "--world-size",
];
const NUMERIC_TESTS = new Set(["-eq", "-ne", "-gt", "-ge", "-lt", "-le"]);

/** Words of `c` where SLURM_GPUS_PER_NODE is read as a number. */
function numericUses(c: ShellCommand): ShellWord[] {
  const out: ShellWord[] = [];
  const all = [...c.assignments.map((a) => a.word), ...c.words];
  for (const w of all) {
    // Arithmetic: $(( ... SLURM_GPUS_PER_NODE ... )).
    const arith = w.raw.indexOf("$((");
    if (arith >= 0 && w.raw.indexOf(VAR, arith) >= 0) {
      out.push(w);
      continue;
    }
  }
  const first = c.words[0]?.value;
  if ((first === "[" || first === "test" || first === "[[") && c.words.some((w) => NUMERIC_TESTS.has(w.value))) {
    for (const w of c.words) if (REF.test(w.value)) out.push(w);
  }
  for (let k = 0; k < c.words.length; k++) {
    const v = c.words[k].value;
    for (const o of COUNT_OPTIONS) {
      if (v === o && REF.test(c.words[k + 1]?.value ?? "")) out.push(c.words[k + 1]);
      else if (v.startsWith(`${o}=`) && REF.test(v.slice(o.length + 1))) out.push(c.words[k]);
    }
  }
  return out;
}

/** GPU024: SLURM_GPUS_PER_NODE read as a number where it is `type:count` or unset. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU024",
    name: "gpus-per-node-used-as-count",
    severity: "warning",
    fixable: true,
    fixSafety: "unsafe",
    // Reports on job scripts only (rules/shared/jobScript.ts `jobScriptOf`), never on a YAML manifest.
    trigger: () => false,
    docs: {
      what: "Reports `$SLURM_GPUS_PER_NODE` used as a number (in `$(( ))`, in a numeric `[ ... -gt ... ]` test, or as the value of `--nproc_per_node`, `--num_processes`, `--gpus` and similar counts) in a job script whose `--gpus-per-node` names a GPU type (`a100:4`), or that asks for GPUs without `--gpus-per-node` at all.",
      follows:
        "The job script itself: the GPU request of its `#SBATCH` lines, and each command's words where `$SLURM_GPUS_PER_NODE` is read as a number (`$(( ))`, numeric tests, count options such as `--nproc_per_node`). Not followed: the value copied into another variable first (`N=$SLURM_GPUS_PER_NODE`), options given to `sbatch` at submission, and scripts it sources or runs.",
      why: "SLURM_GPUS_PER_NODE holds what `--gpus-per-node` was given, so `--gpus-per-node=a100:4` makes it `a100:4`, which is no number: measured on Slurm 22.05.8 (test/fixtures/slurm/measured.md), `$(( SLURM_GPUS_PER_NODE * 2 ))` stops the job with 'a100:2: syntax error in expression', and torchrun's `--nproc-per-node` takes only a number, `gpu`, `cpu` or `auto`. It is also only set when `--gpus-per-node` is given: with `--gres=gpu:2` it was unset while SLURM_GPUS_ON_NODE was 2. SLURM_GPUS_ON_NODE is the number of GPUs allocated on the node, whatever option asked for them.",
      example:
        '#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gpus-per-node=a100:4\n\ntorchrun --nproc_per_node=$SLURM_GPUS_PER_NODE train.py   # GPU024: it is "a100:4"\n',
      fix: "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gpus-per-node=a100:4\n\ntorchrun --nproc_per_node=$SLURM_GPUS_ON_NODE train.py\n",
      whenNotToCare:
        "With `--gpus-per-node=4` (a bare count) the variable is `4` and nothing is reported. A script that asks for no GPU in its directives (they come from the sbatch command line) is not reported.",
      references: [
        `${SBATCH_DOC}, OUTPUT ENVIRONMENT VARIABLES: SLURM_GPUS_PER_NODE "Requested GPU count per allocated node. Only set if the --gpus-per-node option is specified."; SLURM_GPUS_ON_NODE "Number of GPUs allocated to the batch step."`,
        `${SBATCH_DOC}: --gpus-per-node=[type:]<number>`,
        "Measured: test/fixtures/slurm/measured.md (Slurm 22.05.8 from Debian 12)",
      ],
      language: "bash",
    },
  },
  checkManifest(ctx) {
    const job = jobScriptOf(ctx);
    if (!job || !job.request.asksForGpus) return;
    const gpn = job.request.gpusPerNodeOption;
    if (gpn && gpn.type === null) return;
    const why = gpn
      ? `here it is "${gpn.option.value}" (--gpus-per-node names a GPU type), no number`
      : "it is only set when --gpus-per-node is given, and this script asks for its GPUs another way, so it is empty";
    for (const c of job.commands) {
      for (const w of numericUses(c)) {
        const replace = w.raw.split(VAR).length === 2;
        ctx.report({
          range: wordsRange(ctx, w),
          message: `SLURM_GPUS_PER_NODE is used as a number of GPUs but ${why}; SLURM_GPUS_ON_NODE is the count of GPUs on the node`,
          related: [{ range: (gpn?.option ?? job.request.where)!.range, message: "the GPUs asked of Slurm" }],
          ...(replace
            ? {
                fix: {
                  title: "Use $SLURM_GPUS_ON_NODE",
                  safe: false,
                  edits: [
                    { range: wordsRange(ctx, w), newText: w.raw.replace("SLURM_GPUS_PER_NODE", "SLURM_GPUS_ON_NODE") },
                  ],
                },
              }
            : {}),
        });
      }
    }
  },
};
