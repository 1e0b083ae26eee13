"""Sparse-view Gaussian splatting: two radiance fields trained side by side."""
import argparse
import random

import numpy as np
import torch


def safe_state(quiet):
    """Seed everything and pin the process to the first visible GPU."""
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    torch.cuda.set_device(torch.device("cuda:0"))
    if not quiet:
        print("device:", torch.cuda.get_device_name())


def train(args):
    fields = [torch.randn(100_000, 59, device="cuda", requires_grad=True) for _ in range(args.num_fields)]
    optim = torch.optim.Adam(fields, lr=1.6e-4)
    for step in range(args.iterations):
        loss = sum(f.square().mean() for f in fields)
        optim.zero_grad()
        loss.backward()
        optim.step()
        if step % 1000 == 0:
            print(f"[{step}] loss {loss.item():.5f} -> {args.model_path}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--source_path", required=True)
    parser.add_argument("--model_path", required=True)
    parser.add_argument("--resolution", type=int, default=1)
    parser.add_argument("--n_views", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=30000)
    parser.add_argument("--num_fields", type=int, default=2)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    safe_state(args.quiet)
    train(args)
