"""Evaluate a trained weather model; started with srun inside a Slurm allocation."""
import torch

from utils import init_torch


def evaluate(model_path):
    devices = init_torch()
    num_accs_per_task = len(devices)
    blocks = torch.load(model_path, map_location="cpu")
    parts = [block.to(devices[i % num_accs_per_task]) for i, block in enumerate(blocks)]
    print("model split over", devices, "in", len(parts), "parts")


if __name__ == "__main__":
    evaluate("models/temperature.pt")
