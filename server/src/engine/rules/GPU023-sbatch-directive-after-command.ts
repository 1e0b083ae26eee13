import type { ManifestRule } from "../rule";
import { jobScriptOf, SBATCH_DOC } from "./shared/jobScript";

/** GPU023: `#SBATCH` lines after the first command of a job script, which sbatch never reads. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU023",
    name: "sbatch-directive-after-command",
    severity: "warning",
    fixable: true,
    fixSafety: "unsafe",
    // Reports on job scripts only (rules/shared/jobScript.ts `jobScriptOf`), never on a YAML manifest.
    trigger: () => false,
    docs: {
      what: "Reports each `#SBATCH` line (a comment starting the line) that comes after the first command of a Slurm job script.",
      follows:
        "The job script's own lines: its `#SBATCH` comments and its first command (here-document bodies skipped). Not followed: options given to `sbatch` on its command line or through `SBATCH_*` environment variables, and other scripts.",
      why: "sbatch reads `#SBATCH` options only before any executable command: it stops processing directives at the first line that is neither a comment nor blank. A `--gres=gpu:4` or `--time` written below a `module load` or `export` line is an ordinary comment; the job runs without it (no GPUs, the default time limit) and nothing warns.",
      example:
        "#!/bin/bash\n#SBATCH --job-name=train\nmodule load cuda\n#SBATCH --gres=gpu:4   # GPU023: ignored, after the first command\n\npython train.py\n",
      fix: "#!/bin/bash\n#SBATCH --job-name=train\n#SBATCH --gres=gpu:4\nmodule load cuda\n\npython train.py\n",
      whenNotToCare:
        "When the script is never given to sbatch (run with `bash` or `srun` directly). `#SBATCH` text inside a here-document or a string (a script writing another job script) is not a comment and is not reported. The fix (not applied by fix-all: it changes what the job asks for) moves the line above the first command.",
      references: [
        `${SBATCH_DOC}, DESCRIPTION: "The batch script may contain options preceded with "#SBATCH" before any executable commands in the script. sbatch will stop processing further #SBATCH directives once the first non-comment non-whitespace line has been reached in the script."`,
        "Measured on Slurm 22.05.8 (test/fixtures/slurm/measured.md): `#SBATCH --gres=gpu:2` after an `echo` line left the job without GPUs (CUDA_VISIBLE_DEVICES and SLURM_GPUS_ON_NODE unset)",
      ],
      language: "bash",
    },
  },
  checkManifest(ctx) {
    const job = jobScriptOf(ctx);
    if (!job || job.firstCommandLine === null) return;
    const src = ctx.manifest.src;
    const first = job.firstCommandLine;
    const firstRange = {
      start: { line: first, character: 0 },
      end: { line: first, character: src.lineEnd(first) - src.lineStart(first) },
    };
    for (const d of job.ignoredDirectives) {
      const lineText = src.text.slice(src.lineStart(d.line), src.lineEnd(d.line));
      const at = { line: first, character: 0 };
      ctx.report({
        range: d.range,
        message: `sbatch ignores this #SBATCH line: it reads directives only before the first command (line ${first + 1}), so the job runs without ${d.options.length ? d.options.map((o) => (o.value === null ? `--${o.name}` : `--${o.name}=${o.value}`)).join(" ") : "it"}`,
        related: [{ range: firstRange, message: "the first command" }],
        fix: {
          title: "Move the #SBATCH line above the first command",
          safe: false,
          edits: [
            { range: { start: at, end: at }, newText: `${lineText}${src.eol}` },
            { range: src.wholeLines(d.line, d.line), newText: "" },
          ],
        },
      });
    }
  },
};
