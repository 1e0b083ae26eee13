/** Slurm launches for tests of the Python rules that read them (GPU036, GPU037): values as slurmLaunchesOf returns them. */
import type { SlurmLaunch } from "../../../server/src/engine/slurmLaunch";

/** `srun python train.py` in slurm/train.sbatch line 6 (0-based 5), with `#SBATCH --ntasks-per-node=4 --gpus-per-task=1`. */
export const SRUN_ONE_GPU_PER_TASK: SlurmLaunch = {
  script: "/proj/slurm/train.sbatch",
  line: 5,
  launcher: "srun",
  gpusPerProcess: 1,
  gpusFrom: "#SBATCH --gpus-per-task=1",
  processesPerNode: 4,
  setsLocalRank: false,
  asksForGpus: true,
};
/** `srun python train.py` with `#SBATCH --gres=gpu:4 --ntasks-per-node=4`: every task sees the node's 4 GPUs. */
export const SRUN_SHARED_GPUS: SlurmLaunch = {
  ...SRUN_ONE_GPU_PER_TASK,
  gpusPerProcess: 4,
  gpusFrom: "#SBATCH --gres=gpu:4",
};
/** `torchrun --nproc_per_node 4 train.py` in the batch step. */
export const TORCHRUN: SlurmLaunch = {
  ...SRUN_ONE_GPU_PER_TASK,
  launcher: "torchrun",
  gpusPerProcess: 4,
  gpusFrom: "#SBATCH --gres=gpu:4",
  processesPerNode: null,
};
/** `srun python train.py` in a job that asks for no GPU (`#SBATCH --ntasks-per-node=4` only). */
export const SRUN_NO_GPUS: SlurmLaunch = {
  ...SRUN_ONE_GPU_PER_TASK,
  gpusPerProcess: null,
  gpusFrom: null,
  asksForGpus: undefined,
};
/** `python -m torch.distributed.launch --nproc_per_node 4 train.py` in run.sh line 4 (0-based 3), a plain shell script: the launcher passes --local-rank=N. */
export const DISTRIBUTED_LAUNCH: SlurmLaunch = {
  script: "/proj/run.sh",
  line: 3,
  launcher: "torchrun",
  gpusPerProcess: null,
  gpusFrom: null,
  processesPerNode: null,
  setsLocalRank: false,
  passesLocalRankArg: true,
};
