"""Evaluate a trained weather model; started with srun inside a Slurm allocation."""
import os

import torch

from utils import init_torch


def evaluate(model_path):
    if os.environ.get("MASTER_ADDR", "-1") == "-1":
        num_accs_per_task = 1
    else:
        # the model is split over the GPUs a task owns: a node's 4 GPUs shared by its tasks
        num_accs_per_task = int(4 / int(os.environ.get("SLURM_TASKS_PER_NODE", "1")[0]))
    devices = init_torch(num_accs_per_task)
    blocks = torch.load(model_path, map_location="cpu")
    parts = [block.to(devices[i % len(devices)]) for i, block in enumerate(blocks)]
    print("model split over", devices, "in", len(parts), "parts")


if __name__ == "__main__":
    evaluate("models/temperature.pt")
