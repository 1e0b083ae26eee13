"""Configuration of a parallel diffusion inference run: joins the process group and picks the GPU."""
import logging

import torch
import torch.distributed as dist

logger = logging.getLogger(__name__)


class DistriConfig:
    def __init__(self, height=1024, width=1024, parallelism="patch", warmup_steps=4, split_batch=True):
        try:
            dist.init_process_group("nccl")
            rank = dist.get_rank()
            world_size = dist.get_world_size()
        except Exception as e:
            rank = 0
            world_size = 1
            logger.warning(f"could not join a process group ({e}); running on one GPU")

        self.rank = rank
        self.world_size = world_size
        self.height = height
        self.width = width
        self.parallelism = parallelism
        self.warmup_steps = warmup_steps
        self.split_batch = split_batch and world_size >= 2

        device = torch.device(f"cuda:{rank}")
        torch.cuda.set_device(device)
        self.device = device

    def is_main(self):
        return self.rank == 0
