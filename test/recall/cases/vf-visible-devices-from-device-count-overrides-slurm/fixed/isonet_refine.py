"""Iterative missing-wedge correction of subtomograms with a 3D U-Net."""
import argparse

import torch
import torch.nn as nn

from gpu_setup import parse_gpu


def build_unet(channels=32):
    return nn.Sequential(
        nn.Conv3d(1, channels, 3, padding=1), nn.ReLU(),
        nn.Conv3d(channels, channels, 3, padding=1), nn.ReLU(),
        nn.Conv3d(channels, 1, 1),
    )


def main():
    parser = argparse.ArgumentParser(description="refine")
    parser.add_argument("star_file")
    parser.add_argument("--gpuID", type=str, default=None, help="GPU ids, e.g. 0,1,2,3 (default: all)")
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--batch_size", type=int, default=8)
    args = parser.parse_args()

    ngpus, _, _ = parse_gpu(args.gpuID)
    model = nn.DataParallel(build_unet().cuda(), device_ids=list(range(ngpus)))
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    for it in range(args.iterations):
        subtomos = torch.rand(args.batch_size, 1, 64, 64, 64, device="cuda")
        loss = (model(subtomos) - subtomos).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"iteration {it}: loss {loss.item():.4f} on {ngpus} GPU(s)")


if __name__ == "__main__":
    main()
