import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU038");

test("GPU038: CUDA_VISIBLE_DEVICES from SLURM_LOCALID directly or through a variable; the message names the variable", async () => {
  const direct = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = os.environ["SLURM_LOCALID"]\n';
  const [d] = await lintCode(direct, "GPU038");
  assert.equal(d.severity, "warning");
  assert.equal(d.range.start.line, 1);
  assert.match(d.message, /^CUDA_VISIBLE_DEVICES is set from SLURM_LOCALID, a task number, not a GPU id: /);
  const viaProcid =
    'import os\nrank = int(os.environ["SLURM_PROCID"])\nos.environ["CUDA_VISIBLE_DEVICES"] = str(rank % 8)\n';
  assert.match((await lintCode(viaProcid, "GPU038"))[0].message, /set from SLURM_PROCID/);
});

test("GPU038: silent for literal values, values chosen from CUDA_VISIBLE_DEVICES, and files that read no Slurm task number", async () => {
  assert.deepEqual(
    await lintCode('import os\nr = os.environ["SLURM_LOCALID"]\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n', "GPU038"),
    [],
  );
  assert.deepEqual(
    await lintCode(
      'import os\nr = int(os.environ["SLURM_LOCALID"])\nos.environ["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"].split(",")[r]\n',
      "GPU038",
    ),
    [],
  );
  assert.deepEqual(
    await lintCode(
      'import os\nr = int(os.environ["LOCAL_RANK"])\nos.environ["CUDA_VISIBLE_DEVICES"] = str(r)\n',
      "GPU038",
    ),
    [],
  );
});

test("GPU038: an MPI rank (mpi4py's Get_rank() or COMM_WORLD.rank, OMPI_COMM_WORLD_RANK, PMI_RANK) written to CUDA_VISIBLE_DEVICES, also in a helper the module never calls", async () => {
  const helper = [
    "import os",
    "from mpi4py import MPI",
    "",
    "GPUS_PER_NODE = 8",
    "",
    "",
    "def setup_dist():",
    "    comm = MPI.COMM_WORLD",
    '    os.environ["CUDA_VISIBLE_DEVICES"] = str(comm.Get_rank() % GPUS_PER_NODE)',
    "",
  ].join("\n");
  const [d, ...rest] = await lintCode(helper, "GPU038");
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range.start, { line: 8, character: 4 });
  assert.equal(
    d.message,
    "CUDA_VISIBLE_DEVICES is set from the MPI rank (comm.Get_rank()), a process number, not a GPU id: it replaces the GPUs the launch chose (with `CUDA_VISIBLE_DEVICES=1 python script.py`, rank 0 still lands on GPU 0) and, under srun, the ones Slurm gave the step, so the process uses GPUs it was not given whenever the job does not own GPUs 0..n-1 of the node; keep CUDA_VISIBLE_DEVICES as launched and choose among the visible devices (`torch.cuda.set_device(local_rank % torch.cuda.device_count())`)",
  );
  const property = 'import os\nfrom mpi4py import MPI\nos.environ["CUDA_VISIBLE_DEVICES"] = f"{MPI.COMM_WORLD.rank}"\n';
  assert.equal((await lintCode(property, "GPU038")).length, 1);
  const ompi = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = os.environ["OMPI_COMM_WORLD_RANK"]\n';
  assert.match(
    (await lintCode(ompi, "GPU038"))[0].message,
    /^CUDA_VISIBLE_DEVICES is set from OMPI_COMM_WORLD_RANK, a process number/,
  );
  // A Slurm task number in an uncalled function keeps the Slurm message.
  const slurm = 'import os\n\n\ndef setup():\n    os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["SLURM_LOCALID"]\n';
  assert.match((await lintCode(slurm, "GPU038"))[0].message, /set from SLURM_LOCALID, a task number/);
  // Silent: Get_rank() without mpi4py (another library's method), a value chosen from what was set, a literal.
  for (const src of [
    'import os\nimport mylib\nos.environ["CUDA_VISIBLE_DEVICES"] = str(mylib.group().Get_rank())\n',
    'import os\nfrom mpi4py import MPI\nr = MPI.COMM_WORLD.Get_rank()\nos.environ["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"].split(",")[r]\n',
    'import os\nfrom mpi4py import MPI\nr = MPI.COMM_WORLD.Get_rank()\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n',
  ])
    assert.deepEqual(await lintCode(src, "GPU038"), [], src);
});

test("GPU038: a global MPI rank is reported; a node-local one (Split_type(COMM_TYPE_SHARED), OMPI_COMM_WORLD_LOCAL_RANK) is not (mpi4jax#194's fix)", async () => {
  const global =
    'import os\nfrom mpi4py import MPI\n\nrank = MPI.COMM_WORLD.Get_rank()\nos.environ["CUDA_VISIBLE_DEVICES"] = str(rank)\nimport jax\n';
  const [d, ...rest] = await lintCode(global, "GPU038");
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 4);
  assert.match(d.message, /set from the MPI rank \(MPI\.COMM_WORLD\.Get_rank\(\)\)/);
  const inline =
    'import os\nfrom mpi4py import MPI\n\nlocal_rank = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()\nos.environ["CUDA_VISIBLE_DEVICES"] = str(local_rank)\nimport jax\n';
  assert.deepEqual(await lintCode(inline, "GPU038"), []);
  const named =
    'import os\nfrom mpi4py import MPI\n\nnode = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED)\nos.environ["CUDA_VISIBLE_DEVICES"] = str(node.Get_rank())\n';
  assert.deepEqual(await lintCode(named, "GPU038"), []);
  const ompiLocal = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = os.environ["OMPI_COMM_WORLD_LOCAL_RANK"]\n';
  assert.deepEqual(await lintCode(ompiLocal, "GPU038"), []);
  const ompiGlobal = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = os.environ["OMPI_COMM_WORLD_RANK"]\n';
  assert.equal((await lintCode(ompiGlobal, "GPU038")).length, 1);
});
