import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { lintCode, projectTree } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";
import { ProjectIndex, lookupOptions } from "../../../server/src/engine/python/project";
import { resolveLintOptions } from "../../../server/src/engine/options";
import { clearSlurmLaunchCache } from "../../../server/src/engine/slurmLaunch";
import type { SlurmLaunch } from "../../../server/src/engine/slurmLaunch";

fixtureTests("GPU074");

const MPI_CUPY = "from mpi4py import MPI\nimport cupy\n\ncomm = MPI.COMM_WORLD\nx = cupy.arange(10) * comm.rank\n";

test("GPU074's MPI check is preview: an MPI program's first CuPy allocation, naming the rank use and the node-local fix", async () => {
  assert.deepEqual(await lintCode(MPI_CUPY, "GPU074"), [], "preview: off by default");
  const [d, ...rest] = await lintCode(MPI_CUPY, "GPU074", { preview: true });
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 4, character: 4 }, end: { line: 4, character: 19 } });
  assert.match(d.message, /^cupy\.arange\(\) is this process's first GPU work/);
  assert.match(d.message, /`comm\.rank`, line 5/);
  assert.match(
    d.message,
    /cupy\.cuda\.runtime\.setDevice\(MPI\.COMM_WORLD\.Split_type\(MPI\.COMM_TYPE_SHARED\)\.rank\)$/,
  );
});

test("GPU074 is silent when anything in the file selects a device, also after the work or in a function", async () => {
  for (const select of [
    "def pick():\n    cupy.cuda.runtime.setDevice(0)\n",
    'os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n',
    "import torch\ntorch.cuda.set_device(0)\n",
    "import torch.distributed as dist\ndist.init_process_group('nccl')\n",
  ])
    assert.deepEqual(await lintCode(`import os\n${MPI_CUPY}${select}`, "GPU074", { preview: true }), [], select);
});

const SHARED: SlurmLaunch = {
  script: "/p/train.sbatch",
  line: 5,
  launcher: "srun",
  gpusPerProcess: 4,
  gpusFrom: "#SBATCH --gres=gpu:4",
  processesPerNode: 4,
  setsLocalRank: false,
  asksForGpus: true,
};

test("GPU074 under srun tasks that share the node's GPUs; silent with one GPU per task or one task per node", async () => {
  const src = 'import torch\n\nmodel = torch.nn.Linear(4, 4).to("cuda")\n';
  const [d] = await lintCode(src, "GPU074", { preview: true, slurm: [SHARED] });
  assert.match(
    d.message,
    /train\.sbatch:6 starts 4 srun tasks per node that each see the same 4 GPUs \(#SBATCH --gres=gpu:4/,
  );
  assert.match(d.message, /torch\.cuda\.set_device\(int\(os\.environ\["SLURM_LOCALID"\]\)\)$/);
  for (const l of [
    { ...SHARED, gpusPerProcess: 1, gpusFrom: "#SBATCH --gpus-per-task=1" },
    { ...SHARED, processesPerNode: 1 },
  ])
    assert.deepEqual(await lintCode(src, "GPU074", { preview: true, slurm: [l] }), []);
});

const GRAPH = {
  "job.sbatch":
    "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=4\n#SBATCH --gpus-per-node=4\n\nsrun python run.py\n",
  "run.py":
    "from mesh.build import Builder\n\n\ndef main():\n    b = Builder()\n    return b.build()\n\n\nif __name__ == '__main__':\n    main()\n",
  "mesh/__init__.py": "",
  "mesh/build.py":
    'import torch\n\n\nclass Builder:\n    def __init__(self):\n        self.device = "cuda" if torch.cuda.is_available() else "cpu"\n\n    def build(self):\n        return torch.rand(8, 3).to(self.device)\n',
};

async function lintProject(files: Record<string, string>, rel: string, preview = true) {
  const root = projectTree(files);
  mkdirSync(join(root, ".git"));
  try {
    clearSlurmLaunchCache();
    const file = join(root, rel);
    const { options } = resolveLintOptions(file, {}, "editorOnly");
    const project = new ProjectIndex().lookupFor(file, lookupOptions(options));
    return await lintCode(readFileSync(file, "utf8"), "GPU074", { ...options, preview, project });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

test("GPU074 across modules: a constructor's bare cuda that the srun-started program builds and uses before selecting a device", async () => {
  const [d, ...rest] = await lintProject(GRAPH, "mesh/build.py");
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 5);
  assert.match(d.message, /run\.py, which job\.sbatch:6 starts in 4 srun tasks per node/);
  assert.match(d.message, /builds Builder \(run\.py:5\) and calls its build \(run\.py:6\)/);
});

test("GPU074 across modules is silent when the program selects a device first, or each task gets its own GPU", async () => {
  const selects = GRAPH["run.py"].replace("    b = Builder()", "    torch.cuda.set_device(0)\n    b = Builder()");
  assert.deepEqual(await lintProject({ ...GRAPH, "run.py": `import torch\n${selects}` }, "mesh/build.py"), []);
  const perTask = GRAPH["job.sbatch"].replace("--gpus-per-node=4", "--gpus-per-task=1");
  assert.deepEqual(await lintProject({ ...GRAPH, "job.sbatch": perTask }, "mesh/build.py"), []);
});

test("GPU074 follows a module-level device name bound to a bare cuda; an indexed one is a choice", async () => {
  const head = "from mpi4py import MPI\nimport torch\n\nrank = MPI.COMM_WORLD.Get_rank()\n";
  const bare = `${head}device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\nx = torch.ones(3).to(device)\n`;
  const [d] = await lintCode(bare, "GPU074", { preview: true });
  assert.equal(d.range.start.line, 5);
  const indexed = `${head}device = torch.device("cuda", rank % torch.cuda.device_count())\nx = torch.ones(3).to(device)\n`;
  assert.deepEqual(await lintCode(indexed, "GPU074", { preview: true }), []);
});

test("GPU074's srun check is in the default set; a program that reads its rank stays preview", async () => {
  const src = 'import torch\n\nmodel = torch.nn.Linear(4, 4).to("cuda")\n';
  const [d, ...rest] = await lintCode(src, "GPU074", { slurm: [SHARED] });
  assert.equal(rest.length, 0);
  assert.match(d.message, /starts 4 srun tasks per node that each see the same 4 GPUs/);
  // `if rank == 0: evaluate()`: the work may run on one task only.
  const ranked = `import os\n${src}rank = int(os.environ["SLURM_PROCID"])\n`;
  assert.deepEqual(await lintCode(ranked, "GPU074", { slurm: [SHARED] }), []);
  assert.equal((await lintCode(ranked, "GPU074", { preview: true, slurm: [SHARED] })).length, 1);
  const rankZero =
    'import os\nimport torch\n\n\ndef evaluate():\n    return torch.ones(3).cuda()\n\n\nif os.environ["SLURM_PROCID"] == "0":\n    evaluate()\n';
  assert.deepEqual(await lintCode(rankZero, "GPU074", { slurm: [SHARED] }), []);
});

test("GPU074 across modules is in the default set unless the started program reads its rank", async () => {
  const [d, ...rest] = await lintProject(GRAPH, "mesh/build.py", false);
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 5);
  const ranked = GRAPH["run.py"].replace(
    "def main():",
    'import os\n\n\ndef main():\n    rank = os.environ["SLURM_PROCID"]',
  );
  assert.deepEqual(await lintProject({ ...GRAPH, "run.py": ranked }, "mesh/build.py", false), []);
  assert.equal((await lintProject({ ...GRAPH, "run.py": ranked }, "mesh/build.py")).length, 1);
});

test("GPU074 is silent where the job script may bind GPUs per task in a way it does not follow", async () => {
  const job = GRAPH["job.sbatch"];
  const binds = [
    job.replace("srun python", "export SLURM_GPU_BIND=closest\nsrun python"),
    job.replace("srun python", "export SLURM_TRES_BIND=gres/gpu:closest\nsrun python"),
    job.replace("srun python", "srun --tres-bind=gres/gpu:closest python"),
    job.replace("srun python", "srun --tres-per-task=gres/gpu:1 python"),
    job.replace("srun python", "export SLURM_STEP_GRES=none\nsrun python"),
    job.replace("srun python", "srun --gres=none python"),
    job.replace("#SBATCH --ntasks-per-node=4\n", "#SBATCH --ntasks-per-gpu=1\n"),
    job.replace("#SBATCH --nodes=1\n", "#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n#SBATCH hetjob\n"),
  ];
  for (const b of binds) assert.deepEqual(await lintProject({ ...GRAPH, "job.sbatch": b }, "mesh/build.py"), [], b);
});
