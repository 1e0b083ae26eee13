import { scriptNameOf, startedWith } from "../slurmLaunch";
import type { PythonRule } from "../rule";
import { envWrites } from "../rule";
import type { SyntaxNode } from "../python/parser";
import { nodeRange } from "../python/events";
import { envReadsOf, testsMembership } from "./shared/py";

const MEASURED = "test/fixtures/slurm/python-launch/measured.md";

/** GPU036: `os.environ["LOCAL_RANK"]` in a file that the project's job script starts with srun or as the batch step (no torchrun). */
export const rule: PythonRule = {
  meta: {
    code: "GPU036",
    name: "local-rank-unset-under-srun",
    severity: "warning",
    fixable: true,
    fixSafety: "unsafe",
    // A LOCAL_RANK read, by name; runs only when a job script starts the file.
    trigger: (t) => t.has("LOCAL_RANK"),
    needs: "slurm",
    docs: {
      what: 'Reports `os.environ["LOCAL_RANK"]` (no default) in a Python file that a Slurm job script of the project starts with `srun python file.py` or as the batch step (`python file.py` in a script with `#SBATCH` lines), not through torchrun. The job scripts are looked for beside the file, in its parent folders up to the repository root (three levels at most) and in their direct subfolders (`slurm/`, `scripts/`). Not reported: a file that also reads `SLURM_LOCALID`, checks `"LOCAL_RANK" in os.environ` or sets LOCAL_RANK itself, and a job script that sets LOCAL_RANK.',
      follows:
        'Every `os.environ["LOCAL_RANK"]` in the file (functions included), and the project\'s shell and job scripts (`.sbatch`, `.slurm`, `.sh`, `.bash`) beside the file, in its parent folders up to the repository root (three levels at most) and in their direct subfolders, for a command that starts this file by its path or with `python -m` (`srun python file.py`, `python file.py` as the batch step, torchrun, also with its options in a variable: `torchrun $DISTRIBUTED_ARGS train.py` starts train.py, and the variable is read as the words it holds when the script assigns it once to a literal string or array) and whether the script sets LOCAL_RANK. `python $VAR file.py` with a variable that is not known is not read as a plain python launch (it may start torch\'s launcher). Not followed: LOCAL_RANK read in modules this file imports, a script that starts the file through another script or a wrapper, and job scripts elsewhere in the project. A command that srun runs in a shell, directly or through shifter (`srun shifter --image=... bash -c "source vars.sh; python file.py"`), is read as its string\'s last python command when the string names no `*_VISIBLE_DEVICES` variable, has no `cd`/`eval`/`exec`, gives that command no variables of its own, and sources only literal files beside the job script that can be read and name no such variable (a sourced file that sets LOCAL_RANK counts as the job script setting it); other container runners (singularity, apptainer) are not read.',
      why: `Measured on Slurm 22.05.8 (${MEASURED}): under \`srun python\` every task has SLURM_LOCALID and SLURM_PROCID but no LOCAL_RANK, RANK or WORLD_SIZE, and \`int(os.environ["LOCAL_RANK"])\` raises \`KeyError: 'LOCAL_RANK'\`; the batch step has none of them either. Only torchrun (and launchers built on it) sets LOCAL_RANK for its workers. SLURM_LOCALID is the node-local task id, the same number.`,
      example:
        '# train.py, started by slurm/train.sbatch: `srun python train.py`\nimport os\nimport torch\n\nlocal_rank = int(os.environ["LOCAL_RANK"])  # GPU036: KeyError under srun\ntorch.cuda.set_device(local_rank)\n',
      fix: '# train.py, started by slurm/train.sbatch: `srun python train.py`\nimport os\nimport torch\n\nlocal_rank = int(os.environ["SLURM_LOCALID"])\ntorch.cuda.set_device(local_rank)\n',
      whenNotToCare:
        'When the same file is also started by torchrun elsewhere and the srun launch is an old or unused job script: fix the script, or use `os.environ.get("LOCAL_RANK", os.environ.get("SLURM_LOCALID"))`. Launches inside `bash -c \'...\'` strings are not read, nor commands built in variables.',
      references: [
        `Measured: ${MEASURED} (srun sets SLURM_LOCALID, not LOCAL_RANK)`,
        'srun(1), Slurm 22.05, OUTPUT ENVIRONMENT VARIABLES: SLURM_LOCALID "Node local task ID for the process within a job" (https://slurm.schedmd.com/srun.html)',
        "PyTorch documentation, torchrun (Elastic Launch), Environment Variables: LOCAL_RANK is set by torchrun for each worker (https://pytorch.org/docs/stable/elastic/run.html)",
      ],
    },
  },
  check(ctx) {
    const launches = (ctx.slurm ?? []).filter((l) => l.launcher !== "torchrun" && !l.setsLocalRank);
    if (!launches.length) return;
    if (
      envReadsOf(ctx.model, "SLURM_LOCALID").length > 0 ||
      testsMembership(ctx.model, ["LOCAL_RANK"], (k) => k === "LOCAL_RANK")
    )
      return;
    // A file that sets LOCAL_RANK itself (for the processes it starts, or from SLURM_LOCALID) reads its own value.
    if (envWrites(ctx.model).some((w) => w.variable === "LOCAL_RANK")) return;
    const l = launches[0];
    for (const r of envReadsOf(ctx.model, "LOCAL_RANK")) {
      if (r.node.type !== "subscript") continue;
      ctx.report({
        range: nodeRange(r.node),
        message: `${r.node.text} raises KeyError: 'LOCAL_RANK': the job script ${scriptNameOf(l)} (line ${l.line + 1}) starts this file with ${startedWith(l)}, and Slurm sets SLURM_LOCALID, not LOCAL_RANK (measured on Slurm 22.05; only torchrun sets LOCAL_RANK); read SLURM_LOCALID, or start the file with torchrun`,
        fix: slurmFix(r.node),
      });
    }
  },
};

/** `os.environ["LOCAL_RANK"]` → `os.environ["SLURM_LOCALID"]` (the same node-local number under srun). */
function slurmFix(sub: SyntaxNode) {
  const env = sub.childForFieldName("value");
  if (!env) return undefined;
  const newText = `${env.text}["SLURM_LOCALID"]`;
  return { title: `Use ${newText}`, edits: [{ range: nodeRange(sub), newText }], safe: false };
}
