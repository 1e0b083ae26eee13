import type { PythonRule } from "../rule";
import { envWrites } from "../rule";
import { envReadsOf, flowsFrom } from "./shared/py";

const MEASURED = "test/fixtures/slurm/python-launch/measured.md";
/** Slurm's task and node numbers: positions in the job, not GPU ids (srun(1), OUTPUT ENVIRONMENT VARIABLES). */
const RANK_VARIABLES = ["SLURM_LOCALID", "SLURM_PROCID", "SLURM_NODEID"];

/** GPU038: CUDA_VISIBLE_DEVICES written from a Slurm task number (SLURM_LOCALID, SLURM_PROCID, SLURM_NODEID). */
export const rule: PythonRule = {
  meta: {
    code: "GPU038",
    name: "visible-devices-from-slurm-rank",
    severity: "warning",
    fixable: false,
    // A SLURM_ variable and a CUDA_VISIBLE_DEVICES write.
    trigger: (t) => t.has("SLURM_") && t.envWith(["CUDA_VISIBLE_DEVICES"]),
    docs: {
      what: 'Reports a write of CUDA_VISIBLE_DEVICES whose value is computed from SLURM_LOCALID, SLURM_PROCID or SLURM_NODEID (`os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["SLURM_LOCALID"]`, `= str(local_rank)` with `local_rank` read from it).',
      follows:
        "The CUDA_VISIBLE_DEVICES writes of the module's code in the order it runs (top level, `if __name__ == \"__main__\":` blocks, notebook cells in order with their `%env` lines), including the bodies of the module's own functions, class constructors and methods (on `self` or an instance it made) that it calls, two calls deep, with the written value traced back, through names assigned in the file, `for` loops and the expressions built from them, to reads of SLURM_LOCALID, SLURM_PROCID or SLURM_NODEID anywhere in the file. Not followed: values passed in as function parameters or returned by functions, writes in functions the module never calls, and other modules or the job script.",
      why: `Under srun, Slurm has already set CUDA_VISIBLE_DEVICES for the step to the GPUs it allocated on the node, and a task's number is not its GPU's id. Measured on Slurm 22.05.8 (${MEASURED}): while another job held GPUs 0 and 1, \`srun -n2 --gpus-per-task=1\` gave the tasks with SLURM_LOCALID 0 and 1 \`CUDA_VISIBLE_DEVICES=2\` and \`=3\`; writing the local id instead points each task at the other job's GPU (no device cgroups) or at an id outside the allocation (with device cgroups, where CUDA then sees no GPU: it stops at an id that does not exist, ground-truth.md). It happens to work only when the job owns GPUs 0..n-1 of every node.`,
      example:
        'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = os.environ["SLURM_LOCALID"]  # GPU038\nimport torch\n',
      fix: 'import os\nimport torch\n\n# Slurm set CUDA_VISIBLE_DEVICES already; pick among the visible devices\nlocal_rank = int(os.environ["SLURM_LOCALID"])\nn = torch.cuda.device_count()\ntorch.cuda.set_device(local_rank % n)\n',
      whenNotToCare:
        'Nodes given whole to one job (`--exclusive`) with all their GPUs, where the local id and the GPU id agree. A value chosen from what Slurm set (`os.environ["CUDA_VISIBLE_DEVICES"].split(",")[local_rank]`) is not reported.',
      references: [
        `Measured: ${MEASURED} (task ids and GPU ids differ when another job holds GPUs 0 and 1)`,
        "Slurm, 'Generic Resource (GRES) Scheduling', GPU Management: \"the environment variable CUDA_VISIBLE_DEVICES is set for each job step\" (https://slurm.schedmd.com/gres.html#GPU_Management)",
        'srun(1), Slurm 22.05, OUTPUT ENVIRONMENT VARIABLES: SLURM_LOCALID "Node local task ID for the process within a job", SLURM_PROCID "The MPI rank (or relative process ID) of the current process" (https://slurm.schedmd.com/srun.html)',
      ],
    },
  },
  check(ctx) {
    const reads = RANK_VARIABLES.flatMap((v) => envReadsOf(ctx.model, v));
    if (!reads.length) return;
    const sources = new Set(reads.map((r) => r.node.id));
    const byId = new Map(reads.map((r) => [r.node.id, r.variable]));
    const visibleReads = new Set(envReadsOf(ctx.model, "CUDA_VISIBLE_DEVICES").map((r) => r.node.id));
    for (const w of envWrites(ctx.model)) {
      if (w.variable !== "CUDA_VISIBLE_DEVICES" || !w.value) continue;
      if (visibleReads.size && flowsFrom(ctx.model, w.value, visibleReads)) continue; // chosen from what Slurm set
      const from = flowsFrom(ctx.model, w.value, sources);
      if (!from) continue;
      const variable = byId.get(from.id) ?? "SLURM_LOCALID";
      ctx.report({
        range: w.range,
        message: `CUDA_VISIBLE_DEVICES is set from ${variable}, a task number, not a GPU id: under srun Slurm already set CUDA_VISIBLE_DEVICES to the GPUs it gave the step, and the ids differ whenever the job does not own GPUs 0..n-1 of the node (measured: tasks 0 and 1 got GPUs 2 and 3 while another job held 0 and 1), so this picks another job's GPU or one the task cannot see; leave CUDA_VISIBLE_DEVICES to Slurm and choose among the visible devices`,
      });
    }
  },
};
