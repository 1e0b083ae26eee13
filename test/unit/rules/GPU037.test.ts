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
