"""Evaluate the pose regressor against ground-truth parameters."""
import os
import sys

import settings

# The GPU must be chosen before torch (and torchvision, through the model module)
# is imported: peek at --device here, argparse parses the full command line later.
if "--device" not in sys.argv or sys.argv[sys.argv.index("--device") + 1] == "cuda":
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", settings.GPU_IDS)

import argparse

import torch

from models.regressor import PoseRegressor


def evaluate(model, device, n_batches=4):
    model.eval()
    errors = []
    with torch.no_grad():
        for _ in range(n_batches):
            images = torch.randn(8, 3, settings.IMAGE_SIZE, settings.IMAGE_SIZE, device=device)
            target = torch.zeros(8, 72, device=device)
            errors.append((model(images) - target).abs().mean().item())
    return sum(errors) / len(errors)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    args = parser.parse_args()

    if args.device == "cuda":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    else:
        device = "cpu"

    model = PoseRegressor().to(device)
    print(f"mean abs error: {evaluate(model, device):.4f}", file=sys.stderr)


if __name__ == "__main__":
    main()
