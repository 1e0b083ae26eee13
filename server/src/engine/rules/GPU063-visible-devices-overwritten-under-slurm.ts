import type { PythonRule, RuleContext } from "../rule";
import { snippet } from "../rule";
import type { EnvWriteEvent } from "../python/events";
import { scriptNameOf, startedWith } from "../slurmLaunch";
import { envReadsOf, flowsFrom } from "./shared/py";
import { mayKeepSetValue, overwrites } from "./shared/visibleWrites";

const MEASURED = "test/fixtures/slurm/measured.md";

/**
 * Whether the file knows it may run under Slurm or that CUDA_VISIBLE_DEVICES may be set already
 * (shared/visibleWrites.ts {@link mayKeepSetValue}: a read of a `SLURM_*` variable or of
 * CUDA_VISIBLE_DEVICES before its own write, or one tested with `in`): such a file may leave
 * Slurm's value alone on a path the model does not follow, so the rule stays silent.
 */
const slurmAware = (ctx: RuleContext, writes: readonly EnvWriteEvent[]): boolean =>
  mayKeepSetValue(ctx, writes, ["SLURM_", "CUDA_VISIBLE_DEVICES"]);

/** GPU063: a Python file that a GPU job's srun (or batch step, or torchrun in it) starts overwrites CUDA_VISIBLE_DEVICES. */
export const rule: PythonRule = {
  meta: {
    code: "GPU063",
    name: "visible-devices-overwritten-under-slurm",
    severity: "warning",
    fixable: false,
    preview: true,
    // A CUDA_VISIBLE_DEVICES write; runs only when a job script starts the file.
    trigger: (t) => t.envWith(["CUDA_VISIBLE_DEVICES"]),
    needs: "slurm",
    docs: {
      what: 'Reports a write of CUDA_VISIBLE_DEVICES made whenever a Python file runs (`os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu`, with `--gpu` defaulting to `"0"`) when a Slurm job script of the project starts that file (`srun python file.py`, `python file.py` as the batch step, torchrun in the job) in a job that asks Slurm for GPUs: the write replaces the GPU ids Slurm set for the job with ids of the node.',
      follows:
        "The file's CUDA_VISIBLE_DEVICES writes on the path it runs when started (module level, the `if __name__ == \"__main__\":` block, and the functions, constructors and methods it calls, as GPU001 follows them), outside any `if` (the body of the `__main__` block excepted, and an `if`/`elif`/`else` that writes the variable in every branch, which replaces Slurm's value whichever branch runs), `try`, `with` or loop; the project's job scripts found as for GPU036 (beside the file, in its parent folders up to the repository root, three levels at most, and their direct subfolders), and whether the job asks for GPUs (`#SBATCH --gres=gpu...`, `--gpus`, `--gpus-per-node`, `--gpus-per-task`, or the same options with literal values on the `srun` line). Silent where the file reads any `SLURM_*` variable, or CUDA_VISIBLE_DEVICES other than after its own write, or tests one with `in` (it may leave Slurm's value alone); where the job script decides the variable for the command itself (an assignment or `export` in it, a `CUDA_VISIBLE_DEVICES=...` prefix, srun `--export`, or `$CUDA_VISIBLE_DEVICES`, `$SLURM_JOB_GPUS` or `$SLURM_STEP_GPUS` passed to the program, directly or through a variable assigned from one: GPU021 reports the script's write); for `os.environ.setdefault(...)` (it keeps a set value), for an empty or `-1` value (hiding the GPUs on purpose), for values computed from a Slurm task number or MPI rank (GPU038), and for writes in functions the file never calls. Not followed: options the job is submitted with (`sbatch --gres=gpu:1 job.sh`), scripts that start the file through another script, and modules the file imports.",
      why: `Slurm sets CUDA_VISIBLE_DEVICES for the job to the GPUs it allocated on the node, and again for each srun step. Measured on Slurm 22.05.8 (single node, four GPUs, no device cgroups; ${MEASURED}): a job given GPUs 2 and 3 while another job held 0 and 1 got \`CUDA_VISIBLE_DEVICES=2,3\`, in the batch script and in its srun steps. A program that then writes its own ids (a \`--gpu\` option defaulting to \`"0"\`) replaces that list: without device cgroups it runs on GPU 0, which belongs to the other job; with device cgroups the job's GPUs are renumbered from 0 and an id beyond them names no GPU at all (CUDA then sees none, ground-truth.md). threestudio-project/threestudio#191: \`launch.py\` always wrote its \`--gpu\` option (default \`"0"\`) into CUDA_VISIBLE_DEVICES, and under srun it replaced the GPUs Slurm had given the job; the fix leaves the variable alone when Slurm set it. GPU021 reports the same overwrite written in the job script itself.`,
      example:
        '# launch.py, started by dreamfusion.sbatch (`#SBATCH --gres=gpu:1`, `srun python launch.py`)\nimport argparse\nimport os\n\nparser = argparse.ArgumentParser()\nparser.add_argument("--gpu", default="0")\nargs = parser.parse_args()\nos.environ["CUDA_VISIBLE_DEVICES"] = args.gpu  # GPU063: replaces the GPUs Slurm gave the job\n',
      fix: '# launch.py, started by dreamfusion.sbatch (`#SBATCH --gres=gpu:1`, `srun python launch.py`)\nimport argparse\nimport os\n\nparser = argparse.ArgumentParser()\nparser.add_argument("--gpu", default="0")\nargs = parser.parse_args()\nif "SLURM_JOB_ID" not in os.environ:  # under Slurm, keep the GPUs it gave the job\n    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu\n',
      whenNotToCare:
        "Nodes given whole to one job (`--exclusive`) with all their GPUs, where the node's ids and the job's agree; a cluster whose device cgroups renumber the job's GPUs from 0, where a written id within the job's count names the job's own GPU. A preview rule: the ecosystem corpus has no Python file that a GPU job starts and that writes the variable; on 22 public projects pairing a GPU job script with a Python file it starts (2026-12-07), 29 findings (24 once copies of the same file in forks are counted once): 26 true, 3 noise (jobs given all the GPUs of a node, where the written ids are the job's own), 0 false (a job script that exported the variable itself was the one false finding of an earlier sample, now silent); most true ones write `\"0\"` in a one-GPU job, which does harm only on clusters without device cgroups. 90 % is below the default set's bar of 95 %. No quick fix: whether to keep Slurm's value, or to choose among its ids, depends on the program.",
      references: [
        `Measured: ${MEASURED} (a job given GPUs 2 and 3 got CUDA_VISIBLE_DEVICES=2,3)`,
        "Slurm, 'Generic Resource (GRES) Scheduling', GPU Management: \"the environment variable CUDA_VISIBLE_DEVICES is set for each job step\" (https://slurm.schedmd.com/gres.html#GPU_Management)",
        'Python, os.environ: "putenv() will be called automatically when the mapping is modified": an assignment replaces the value the process inherited (https://docs.python.org/3/library/os.html#os.environ)',
        "threestudio-project/threestudio#191 (2023-06-28): launch.py's `--gpu` option written into CUDA_VISIBLE_DEVICES replaced Slurm's ids under srun",
      ],
    },
  },
  check(ctx) {
    // A job script that sets the variable itself (or passes Slurm's value on) already decided it: GPU021's.
    const launch = (ctx.slurm ?? []).find((l) => l.asksForGpus && !l.setsVisibleDevices);
    if (!launch) return;
    const writes = overwrites(ctx, { everyBranch: true });
    if (!writes.length || slurmAware(ctx, writes)) return;
    // A file that asks mpi4py for its rank writes the variable per rank: GPU038's.
    if ([...ctx.model.symbols.values()].some((p) => p === "mpi4py" || p.startsWith("mpi4py."))) return;
    // Values from a task number or an MPI rank are GPU038's (it reads the same writes).
    const ranks = new Set(
      ["OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK", "LOCAL_RANK", "RANK"]
        .flatMap((v) => envReadsOf(ctx.model, v))
        .map((r) => r.node.id),
    );
    for (const w of writes) {
      if (ranks.size && flowsFrom(ctx.model, w.value, ranks)) continue;
      ctx.report({
        range: w.range,
        message: `${snippet(w.statement ?? w.value!)} replaces the GPU ids Slurm set: the job script ${scriptNameOf(launch)} (line ${launch.line + 1}) starts this file with ${startedWith(launch)} in a job that asks for GPUs, and Slurm sets CUDA_VISIBLE_DEVICES to the job's GPUs on the node (measured on Slurm 22.05: a job given GPUs 2 and 3 got 2,3), so this names GPUs of the node instead (without device cgroups another job's GPU, with them an id that may not exist); keep Slurm's value (write only when "SLURM_JOB_ID" not in os.environ) or choose among its ids`,
        related: [
          {
            file: launch.script,
            range: { start: { line: launch.line, character: 0 }, end: { line: launch.line, character: 0 } },
            message: `${scriptNameOf(launch)}:${launch.line + 1} starts this file in a job that asks Slurm for GPUs`,
          },
        ],
      });
    }
  },
};
