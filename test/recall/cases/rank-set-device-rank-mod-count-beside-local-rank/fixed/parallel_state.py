"""Process-group setup shared by the pipeline's entry points (started with torchrun)."""
import os

import torch
import torch.distributed as dist


def init_distributed_environment(world_size=-1, rank=-1, local_rank=-1, init_method="env://", backend="nccl"):
    if local_rank == -1:
        # not given: under torchrun LOCAL_RANK holds it
        local_rank = int(os.environ.get("LOCAL_RANK", rank))
    if not dist.is_initialized():
        dist.init_process_group(
            backend=backend,
            init_method=init_method,
            world_size=world_size,
            rank=rank,
            device_id=torch.device(f"cuda:{local_rank}"),
        )
        torch.cuda.set_device(local_rank)
    return torch.device(f"cuda:{local_rank}")
