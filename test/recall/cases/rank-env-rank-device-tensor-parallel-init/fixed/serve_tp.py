"""Tensor-parallel inference server; torchrun starts one process per GPU."""
import os

import torch
import torch.distributed as dist


def init_distributed() -> torch.device:
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    dist.init_process_group(backend="nccl", init_method="env://", world_size=world_size, rank=rank)
    torch.cuda.set_device(local_rank)
    device = torch.device(f"cuda:{local_rank}")

    # warm up the communicator so the first request is not slow
    x = torch.ones(1, device=device)
    dist.all_reduce(x)
    torch.cuda.synchronize(device)
    return device


if __name__ == "__main__":
    dev = init_distributed()
    print("serving on", dev)
