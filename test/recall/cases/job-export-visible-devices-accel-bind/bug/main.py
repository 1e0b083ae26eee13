"""Contrastive image-text training; srun starts one task per GPU on each node."""
import os

import torch
import torch.distributed as dist


def init_distributed_device():
    local_rank = int(os.environ["SLURM_LOCALID"])
    rank = int(os.environ["SLURM_PROCID"])
    world_size = int(os.environ["SLURM_NTASKS"])
    dist.init_process_group(backend="nccl", init_method="env://", world_size=world_size, rank=rank)
    device = torch.device(f"cuda:{local_rank}")
    torch.cuda.set_device(device)
    return device


if __name__ == "__main__":
    dev = init_distributed_device()
    print("rank", dist.get_rank(), "on", dev)
