import type { PythonRule } from "../rule";
import type { SyntaxNode } from "../python/parser";
import { envWrites, snippet } from "../rule";
import type { EnvWriteEvent } from "../python/events";
import { envReadsOf, flowsFrom } from "./shared/py";

const MEASURED = "test/fixtures/slurm/python-launch/measured.md";
/** Slurm's task and node numbers: positions in the job, not GPU ids (srun(1), OUTPUT ENVIRONMENT VARIABLES). */
const RANK_VARIABLES = ["SLURM_LOCALID", "SLURM_PROCID", "SLURM_NODEID"];
/**
 * MPI launchers' global process numbers: Open MPI's OMPI_COMM_WORLD_RANK ("the MPI rank of this
 * process in MPI_COMM_WORLD": https://docs.open-mpi.org/en/v5.0.x/tuning-apps/environment-var.html)
 * and the PMI rank that MPICH's Hydra and Intel MPI set (PMI_RANK). Node-local ranks
 * (OMPI_COMM_WORLD_LOCAL_RANK, a `Split_type(MPI.COMM_TYPE_SHARED)` communicator's rank) are not
 * reported: one GPU per process from the node-local rank is the idiom MPI programs without Slurm
 * are told to use (mpi4jax's documentation, mpi4jax/mpi4jax#194), and it points at ids 0..n-1 of
 * every node, which exist wherever the node has a GPU per process.
 */
const MPI_VARIABLES = ["OMPI_COMM_WORLD_RANK", "PMI_RANK"];

/** `<comm>.Split_type(...)`: a communicator of one node's processes (mpi4py's `Comm.Split_type` with COMM_TYPE_SHARED). */
function isSplitTypeCall(n: SyntaxNode | null | undefined): boolean {
  const fn = n?.type === "call" ? n.childForFieldName("function") : null;
  return fn?.type === "attribute" && fn.childForFieldName("attribute")?.text === "Split_type";
}

/**
 * The names the file assigns a `Split_type(...)` communicator to, in any scope (`local =
 * comm.Split_type(MPI.COMM_TYPE_SHARED)`): their ranks are node-local.
 */
function nodeCommunicators(ctx: Parameters<PythonRule["check"]>[0]): Set<string> {
  const names = new Set<string>();
  for (const a of ctx.model.nodesMentioning("assignment", ["Split_type"], true)) {
    const left = a.childForFieldName("left");
    if (left?.type === "identifier" && isSplitTypeCall(a.childForFieldName("right"))) names.add(left.text);
  }
  return names;
}

/**
 * mpi4py's global rank queries in a file that imports mpi4py: `<comm>.Get_rank()` on any
 * communicator but a node's (`Split_type(...)`, {@link nodeCommunicators}), and
 * `MPI.COMM_WORLD.rank` (mpi4py's `Comm.rank` property: "rank of this process in communicator").
 */
function mpiRankNodes(ctx: Parameters<PythonRule["check"]>[0]): Array<{ node: SyntaxNode; variable: string }> {
  if (![...ctx.model.symbols.values()].some((p) => p === "mpi4py" || p.startsWith("mpi4py."))) return [];
  const out: Array<{ node: SyntaxNode; variable: string }> = [];
  const local = nodeCommunicators(ctx);
  for (const call of ctx.model.nodesMentioning("call", ["Get_rank"], true)) {
    const fn = call.type === "call" ? call.childForFieldName("function") : null;
    if (fn?.type !== "attribute" || fn.childForFieldName("attribute")?.text !== "Get_rank") continue;
    const comm = fn.childForFieldName("object");
    if (isSplitTypeCall(comm) || (comm?.type === "identifier" && local.has(comm.text))) continue;
    out.push({ node: call, variable: "the MPI rank" });
  }
  for (const a of ctx.model.nodesMentioning("attribute", ["COMM_WORLD"], true)) {
    const obj = a.type === "attribute" ? a.childForFieldName("object") : null;
    if (a.childForFieldName("attribute")?.text === "rank" && obj?.text.endsWith("COMM_WORLD"))
      out.push({ node: a, variable: "the MPI rank" });
  }
  return out;
}

/** GPU038: CUDA_VISIBLE_DEVICES written from a Slurm task number (SLURM_LOCALID, SLURM_PROCID, SLURM_NODEID) or an MPI rank. */
export const rule: PythonRule = {
  meta: {
    code: "GPU038",
    name: "visible-devices-from-slurm-rank",
    severity: "warning",
    fixable: false,
    // A SLURM_ variable and a CUDA_VISIBLE_DEVICES write.
    trigger: (t) =>
      (t.has("SLURM_") || t.has("OMPI_COMM_WORLD") || t.has("PMI_RANK") || t.has("Get_rank") || t.has("COMM_WORLD")) &&
      t.envWith(["CUDA_VISIBLE_DEVICES"]),
    docs: {
      what: 'Reports a write of CUDA_VISIBLE_DEVICES whose value is computed from SLURM_LOCALID, SLURM_PROCID or SLURM_NODEID (`os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["SLURM_LOCALID"]`, `= str(local_rank)` with `local_rank` read from it), or from a global MPI rank: mpi4py\'s `comm.Get_rank()` or `MPI.COMM_WORLD.rank`, OMPI_COMM_WORLD_RANK, PMI_RANK (`os.environ["CUDA_VISIBLE_DEVICES"] = str(MPI.COMM_WORLD.Get_rank() % 8)`).',
      follows:
        "The CUDA_VISIBLE_DEVICES writes of the module's code in the order it runs (top level, `if __name__ == \"__main__\":` blocks, notebook cells in order with their `%env` lines), including the bodies of the module's own functions, class constructors and methods (on `self` or an instance it made) that it calls, two calls deep, and the module-level functions the module never calls (a `setup_dist()` helper that the project's scripts call), with the written value traced back, through names assigned in the file, `for` loops and the expressions built from them, to reads of SLURM_LOCALID, SLURM_PROCID, SLURM_NODEID or the MPI rank variables anywhere in the file, and to mpi4py's rank queries in a file that imports mpi4py. Not followed: values passed in as function parameters or returned by functions, methods the module never calls, and other modules or the job script. Not reported: a node-local MPI rank (OMPI_COMM_WORLD_LOCAL_RANK, the rank of a `Split_type(MPI.COMM_TYPE_SHARED)` communicator), the idiom mpi4jax documents for one GPU per process without Slurm.",
      why: `Under srun, Slurm has already set CUDA_VISIBLE_DEVICES for the step to the GPUs it allocated on the node, and a task's number is not its GPU's id. Measured on Slurm 22.05.8 (${MEASURED}): while another job held GPUs 0 and 1, \`srun -n2 --gpus-per-task=1\` gave the tasks with SLURM_LOCALID 0 and 1 \`CUDA_VISIBLE_DEVICES=2\` and \`=3\`; writing the local id instead points each task at the other job's GPU (no device cgroups) or at an id outside the allocation (with device cgroups, where CUDA then sees no GPU: it stops at an id that does not exist, ground-truth.md). It happens to work only when the job owns GPUs 0..n-1 of every node. An MPI rank written there does the same without Slurm: the write replaces whatever CUDA_VISIBLE_DEVICES the process was started with, so \`CUDA_VISIBLE_DEVICES=1 python sample.py\` (one process, rank 0) runs on GPU 0 (guided-diffusion#124, where every sampling script called such a helper), and \`rank % 8\` assumes eight GPUs a node, all free. On the ecosystem corpus (37 code bases with guided-diffusion and improved-diffusion, 2026-12-06) the MPI form is reported once, true: guided-diffusion's dist_util.py, the helper of that report; improved-diffusion's helper leaves CUDA_VISIBLE_DEVICES alone and is silent.`,
      example:
        'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = os.environ["SLURM_LOCALID"]  # GPU038\nimport torch\n',
      fix: 'import os\nimport torch\n\n# Slurm set CUDA_VISIBLE_DEVICES already; pick among the visible devices\nlocal_rank = int(os.environ["SLURM_LOCALID"])\nn = torch.cuda.device_count()\ntorch.cuda.set_device(local_rank % n)\n',
      whenNotToCare:
        'Nodes given whole to one job (`--exclusive`) with all their GPUs, where the local id and the GPU id agree. A value chosen from what Slurm set (`os.environ["CUDA_VISIBLE_DEVICES"].split(",")[local_rank]`) is not reported.',
      references: [
        `Measured: ${MEASURED} (task ids and GPU ids differ when another job holds GPUs 0 and 1)`,
        "Slurm, 'Generic Resource (GRES) Scheduling', GPU Management: \"the environment variable CUDA_VISIBLE_DEVICES is set for each job step\" (https://slurm.schedmd.com/gres.html#GPU_Management)",
        'Open MPI, Environment variables set for MPI applications: OMPI_COMM_WORLD_RANK "the MPI rank of this process in MPI_COMM_WORLD", OMPI_COMM_WORLD_LOCAL_RANK "the relative rank of this process on this node within its job" (https://docs.open-mpi.org/en/v5.0.x/tuning-apps/environment-var.html)',
        'mpi4py, Comm.Get_rank(): "Return the rank of this process in a communicator" (https://mpi4py.readthedocs.io/en/stable/reference/mpi4py.MPI.Comm.html)',
        'Python, os.environ: "putenv() will be called automatically when the mapping is modified": an assignment replaces the value the process inherited (https://docs.python.org/3/library/os.html#os.environ)',
        'srun(1), Slurm 22.05, OUTPUT ENVIRONMENT VARIABLES: SLURM_LOCALID "Node local task ID for the process within a job", SLURM_PROCID "The MPI rank (or relative process ID) of the current process" (https://slurm.schedmd.com/srun.html)',
      ],
    },
  },
  check(ctx) {
    const reads = [...RANK_VARIABLES, ...MPI_VARIABLES].flatMap((v) =>
      envReadsOf(ctx.model, v).map((r) => ({ node: r.node, variable: r.variable })),
    );
    reads.push(...mpiRankNodes(ctx));
    if (!reads.length) return;
    const sources = new Set(reads.map((r) => r.node.id));
    const byId = new Map(reads.map((r) => [r.node.id, r.variable]));
    const visibleReads = new Set(envReadsOf(ctx.model, "CUDA_VISIBLE_DEVICES").map((r) => r.node.id));
    // The module's own code, then the functions it never calls (a `setup_dist()` helper that the
    // project's scripts call): the write replaces the launch's choice whenever it runs.
    const writes = [...envWrites(ctx.model), ...ctx.model.functionTimelines.flatMap((f) => f.events)].filter(
      (e): e is EnvWriteEvent => e.kind === "envWrite" && e.variable === "CUDA_VISIBLE_DEVICES" && !!e.value,
    );
    const seen = new Set<string>();
    for (const w of writes) {
      const key = `${w.range.start.line}:${w.range.start.character}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (visibleReads.size && flowsFrom(ctx.model, w.value, visibleReads)) continue; // chosen from what was set
      const from = flowsFrom(ctx.model, w.value, sources);
      if (!from) continue;
      const variable = byId.get(from.id) ?? "SLURM_LOCALID";
      const slurm = RANK_VARIABLES.includes(variable);
      ctx.report({
        range: w.range,
        message: slurm
          ? `CUDA_VISIBLE_DEVICES is set from ${variable}, a task number, not a GPU id: under srun Slurm already set CUDA_VISIBLE_DEVICES to the GPUs it gave the step, and the ids differ whenever the job does not own GPUs 0..n-1 of the node (measured: tasks 0 and 1 got GPUs 2 and 3 while another job held 0 and 1), so this picks another job's GPU or one the task cannot see; leave CUDA_VISIBLE_DEVICES to Slurm and choose among the visible devices`
          : `CUDA_VISIBLE_DEVICES is set from ${variable === "the MPI rank" ? `the MPI rank (${snippet(from)})` : variable}, a process number, not a GPU id: it replaces the GPUs the launch chose (with \`CUDA_VISIBLE_DEVICES=1 python script.py\`, rank 0 still lands on GPU 0) and, under srun, the ones Slurm gave the step, so the process uses GPUs it was not given whenever the job does not own GPUs 0..n-1 of the node; keep CUDA_VISIBLE_DEVICES as launched and choose among the visible devices (\`torch.cuda.set_device(local_rank % torch.cuda.device_count())\`)`,
      });
    }
  },
};
