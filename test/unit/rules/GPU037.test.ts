import assert from "node:assert/strict";
import { test } from "node:test";
import { lintCode, applyFix } from "../support/helpers";
import { fixtureTests } from "./fixtureCheck";
import { SRUN_ONE_GPU_PER_TASK, SRUN_SHARED_GPUS, TORCHRUN } from "../support/slurmLaunches";

fixtureTests("GPU037", { preview: true, slurm: [SRUN_ONE_GPU_PER_TASK] });

const SET =
  'import os\nimport torch\n\nlocal_rank = int(os.environ["SLURM_LOCALID"])\ntorch.cuda.set_device(local_rank)\n';

test("GPU037: set_device(local_rank) with one GPU per task and 4 tasks per node; the fix uses device 0", async () => {
  const [d, ...rest] = await lintCode(SET, "GPU037", { slurm: [SRUN_ONE_GPU_PER_TASK] });
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 4);
  assert.equal(
    d.message,
    "`torch.cuda.set_device(local_rank)` picks the device by the task's rank, but each task sees one GPU (train.sbatch line 6 starts this file with #SBATCH --gpus-per-task=1, 4 tasks per node): Slurm gives task 1 only its own GPU as cuda:0 (measured: task 1 sees CUDA_VISIBLE_DEVICES=1), so every task but the first fails with invalid device ordinal; use device 0",
  );
  assert.equal(applyFix(SET, d), SET.replace("set_device(local_rank)", "set_device(0)"));
  // torch.device("cuda", local_rank) too, with LOCAL_RANK as the source.
  const dev = 'import os\nimport torch\nr = int(os.environ.get("LOCAL_RANK", 0))\nd = torch.device("cuda", r)\n';
  assert.deepEqual(
    (await lintCode(dev, "GPU037", { slurm: [SRUN_ONE_GPU_PER_TASK] })).map((x) => x.range.start.line),
    [3],
  );
});

test("GPU037: ordinals against the job's GPUs per process, not the workstation's (GPU017 steps aside)", async () => {
  const src = 'import torch\na = torch.zeros(1, device="cuda:3")\nb = torch.zeros(1, device="cuda:4")\n';
  const got = await lintCode(src, "GPU037", { slurm: [SRUN_SHARED_GPUS] });
  assert.deepEqual(
    got.map((d) => d.range.start.line),
    [2],
  );
  assert.equal(
    got[0].message,
    '"cuda:4" names device 4, but each process of this file sees 4 GPUs (train.sbatch line 6 starts this file with #SBATCH --gres=gpu:4; Slurm lists only those in CUDA_VISIBLE_DEVICES, renumbered from 0 by CUDA): only cuda:0..cuda:3 exist, so this raises invalid device ordinal',
  );
  // With the workstation known to have 2 GPUs, GPU017 would report cuda:3 and cuda:4; a file started by a job script is the job's.
  const machine = { gpuCount: 2, uuids: [] };
  assert.equal((await lintCode(src, "GPU017", { machine })).length, 2);
  assert.deepEqual(await lintCode(src, "GPU017", { machine, slurm: [SRUN_SHARED_GPUS] }), []);
});

test("GPU037: silent with shared GPUs (set_device(local_rank) is right there), without a known count, and when the file sets CUDA_VISIBLE_DEVICES", async () => {
  assert.deepEqual(await lintCode(SET, "GPU037", { slurm: [SRUN_SHARED_GPUS] }), []);
  assert.deepEqual(await lintCode(SET, "GPU037", { slurm: [{ ...SRUN_ONE_GPU_PER_TASK, gpusPerProcess: null }] }), []);
  assert.deepEqual(await lintCode(SET, "GPU037", { slurm: [{ ...SRUN_ONE_GPU_PER_TASK, processesPerNode: 1 }] }), []);
  assert.deepEqual(await lintCode(SET, "GPU037", { slurm: [TORCHRUN] }), []);
  assert.deepEqual(await lintCode(SET, "GPU037"), []);
  const own =
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\nimport torch\nx = torch.zeros(1, device="cuda:1")\n';
  assert.deepEqual(await lintCode(own, "GPU037", { slurm: [SRUN_ONE_GPU_PER_TASK] }), []);
});

test("GPU037: jax.distributed.initialize() without local_device_ids under an srun step with more tasks per node than GPUs each task sees (jax-ml/jax#29669); silent with one task per GPU, local_device_ids, JAX_LOCAL_DEVICE_IDS, or another detection method", async () => {
  const src = "import jax\n\njax.distributed.initialize()\nprint(jax.process_index())\n";
  const eight = { ...SRUN_SHARED_GPUS, processesPerNode: 8, gpusFrom: "#SBATCH --gpus-per-node=4" };
  const [d, ...rest] = await lintCode(src, "GPU037", { slurm: [eight] });
  assert.equal(rest.length, 0);
  assert.deepEqual(d.range, { start: { line: 2, character: 0 }, end: { line: 2, character: 28 } });
  assert.equal(
    d.message,
    "jax.distributed.initialize() lets JAX pick this process's GPU by its Slurm local task id (SLURM_LOCALID: jax's Slurm cluster support sets local_device_ids to [SLURM_LOCALID]), but train.sbatch line 6 runs 8 tasks per node and each sees 4 GPUs (#SBATCH --gpus-per-node=4): the tasks with local id 4..7 name a device that does not exist (invalid device ordinal); run one task per GPU, or pass local_device_ids",
  );
  // One GPU per task, 4 tasks: local ids 1..3 have no device either.
  const [one] = await lintCode(src, "GPU037", { slurm: [SRUN_ONE_GPU_PER_TASK] });
  assert.match(
    one.message,
    /runs 4 tasks per node and each sees 1 GPU \(#SBATCH --gpus-per-task=1\): the tasks with local id 1\.\.3/,
  );
  for (const quiet of [
    src.replace("initialize()", "initialize(local_device_ids=[0])"),
    src.replace("initialize()", 'initialize("host:1234", 16, 0, [0])'),
    src.replace("initialize()", 'initialize(cluster_detection_method="mpi4py")'),
    src.replace("initialize()", "initialize(**options)"),
    'import os\nos.environ["JAX_LOCAL_DEVICE_IDS"] = "0"\n' + src,
  ])
    assert.deepEqual(await lintCode(quiet, "GPU037", { slurm: [eight] }), [], quiet);
  assert.deepEqual(await lintCode(src, "GPU037", { slurm: [SRUN_SHARED_GPUS] }), [], "4 tasks on 4 GPUs");
  assert.deepEqual(
    await lintCode(src, "GPU037", { slurm: [{ ...eight, launcher: "batch", processesPerNode: 1 }] }),
    [],
  );
});

test('GPU037: a rank that reaches set_device through a parameter of a module function (train(args, local_rank) after local_rank = int(os.environ["LOCAL_RANK"]))', async () => {
  const src =
    'import os\nimport torch\n\n\ndef train(args, local_rank, world_size):\n    torch.cuda.set_device(local_rank)\n\n\nif __name__ == "__main__":\n    local_rank = 0\n    if int(os.environ.get("WORLD_SIZE", 1)) > 1:\n        local_rank = int(os.environ["LOCAL_RANK"])\n    train(None, local_rank, 4)\n';
  const [d, ...rest] = await lintCode(src, "GPU037", { slurm: [SRUN_ONE_GPU_PER_TASK] });
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 5);
  assert.equal(applyFix(src, d), src.replace("set_device(local_rank)", "set_device(0)"));
  // By keyword too; silent when no call passes a rank, the function reassigns it, or a splat hides the position.
  const kw = src.replace("train(None, local_rank, 4)", "train(None, world_size=4, local_rank=local_rank)");
  assert.equal((await lintCode(kw, "GPU037", { slurm: [SRUN_ONE_GPU_PER_TASK] })).length, 1);
  const silent = async (text: string) =>
    assert.deepEqual(await lintCode(text, "GPU037", { slurm: [SRUN_ONE_GPU_PER_TASK] }), [], text);
  await silent(src.replace("train(None, local_rank, 4)", "train(None, 0, 4)"));
  await silent(
    src.replace(
      "def train(args, local_rank, world_size):\n",
      "def train(args, local_rank, world_size):\n    local_rank = 0\n",
    ),
  );
  await silent(src.replace("train(None, local_rank, 4)", "train(*[None, local_rank, 4])"));
  await silent(src.replace("train(None, local_rank, 4)", "train(*extra, local_rank, 4)"));
});
