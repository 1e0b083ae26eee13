/** Helpers shared by the job-script rules (GPU021-GPU025). */
import type { ManifestRuleContext } from "../../rule";
import type { JobScriptFacts } from "../../manifests/jobscript";
import type { ShellWord } from "../../manifests/shell";
import type { Range } from "../../types";
import { hasSbatchLine } from "../../manifests/prefilter";

/** The job-script facts of the linted file, or null when it is no job script (a shell script without an `#SBATCH` line is none). */
export function jobScriptOf(ctx: ManifestRuleContext): JobScriptFacts | null {
  const facts = ctx.manifest.kind === "jobscript" ? ctx.manifest.jobscript : null;
  return facts && hasSbatchLine(ctx.manifest.src.text) ? facts : null;
}

/** The range of the words `first`..`last` (inclusive). */
export function wordsRange(ctx: ManifestRuleContext, first: ShellWord, last: ShellWord = first): Range {
  return ctx.manifest.src.range(first.start, last.end);
}

/** The sbatch(1) man page, Slurm 22.05 (Debian 12 `slurm-client`), also https://slurm.schedmd.com/sbatch.html. */
export const SBATCH_DOC = "sbatch(1), Slurm 22.05 (https://slurm.schedmd.com/sbatch.html)";
/** The srun(1) man page. */
export const SRUN_DOC = "srun(1), Slurm 22.05 (https://slurm.schedmd.com/srun.html)";
/** Slurm's "Generic Resource (GRES) Scheduling" guide, section "GPU Management". */
export const GRES_DOC =
  "Slurm, 'Generic Resource (GRES) Scheduling', GPU Management (https://slurm.schedmd.com/gres.html#GPU_Management)";
