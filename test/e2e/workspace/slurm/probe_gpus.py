"""Prints the GPUs Slurm gave this task (examples/-like: what a training script sees at start)."""
import os

if __name__ == "__main__":
    print(
        f"task {os.environ.get('SLURM_LOCALID', '?')}:",
        f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')}",
        f"CUDA_DEVICE_ORDER={os.environ.get('CUDA_DEVICE_ORDER', 'unset')}",
        flush=True,
    )
