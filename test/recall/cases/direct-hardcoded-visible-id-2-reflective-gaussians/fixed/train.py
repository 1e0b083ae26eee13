"""Optimise a cloud of 3D Gaussians (positions, colours, opacities) against training views."""
import os
os.environ["CUDA_VISIBLE_DEVICES"] = "0"
os.environ["CUDA_LAUNCH_BLOCKING"] = "1"

from argparse import ArgumentParser

import torch
from tqdm import tqdm


def render(means, colours, opacities, pixels):
    # stand-in splatting: each pixel mixes the Gaussians weighted by distance and opacity
    weights = torch.softmax(-torch.cdist(pixels, means[:, :2]) + opacities.squeeze(-1), dim=-1)
    return weights @ torch.sigmoid(colours)


def training(args):
    device = torch.device("cuda")
    means = torch.randn(args.num_gaussians, 3, device=device, requires_grad=True)
    colours = torch.zeros(args.num_gaussians, 3, device=device, requires_grad=True)
    opacities = torch.zeros(args.num_gaussians, 1, device=device, requires_grad=True)
    optimizer = torch.optim.Adam([means, colours, opacities], lr=args.lr)

    pixels = torch.rand(4096, 2, device=device) * 2 - 1
    target = torch.rand(4096, 3, device=device)
    for it in tqdm(range(1, args.iterations + 1)):
        loss = torch.nn.functional.l1_loss(render(means, colours, opacities, pixels), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if it % 1000 == 0:
            tqdm.write(f"[{it}] L1 {loss.item():.4f}")
    torch.save({"means": means, "colours": colours, "opacities": opacities}, args.model_path)


if __name__ == "__main__":
    parser = ArgumentParser(description="Training script parameters")
    parser.add_argument("--iterations", type=int, default=30_000)
    parser.add_argument("--num_gaussians", type=int, default=20_000)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--model_path", default="output/point_cloud.pt")
    training(parser.parse_args())
