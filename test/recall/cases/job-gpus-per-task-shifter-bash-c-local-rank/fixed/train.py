import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


def build_model():
    return nn.Sequential(
        nn.Conv3d(4, 32, 3, padding=1), nn.LeakyReLU(0.2),
        nn.Conv3d(32, 32, 3, padding=1), nn.LeakyReLU(0.2),
        nn.Conv3d(32, 5, 1),
    )


def train(args, local_rank, world_rank, world_size):
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda:%d" % local_rank)
    model = build_model().to(device)
    if world_size > 1:
        model = DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for step in range(args.steps):
        inp = torch.randn(args.local_batch_size, 4, 64, 64, 64, device=device)
        tar = torch.randn(args.local_batch_size, 5, 64, 64, 64, device=device)
        loss = nn.functional.l1_loss(model(inp), tar)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if world_rank == 0 and step % 10 == 0:
            print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--local_batch_size", type=int, default=4)
    args = parser.parse_args()

    world_size = int(os.environ.get("WORLD_SIZE", 1))
    world_rank, local_rank = 0, 0
    if world_size > 1:
        dist.init_process_group(backend="nccl", init_method="env://")
        world_rank = dist.get_rank()
        local_rank = int(os.environ["LOCAL_RANK"])
    train(args, local_rank, world_rank, world_size)
