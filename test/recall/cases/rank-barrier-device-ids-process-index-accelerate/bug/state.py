"""Per-process distributed state shared by the training entry points.

Started with `accelerate launch` (torchrun underneath), one process per GPU, on one or several
machines.
"""
import os

import torch
import torch.distributed as dist


class ProcessState:
    def __init__(self, backend="nccl"):
        if not dist.is_initialized():
            dist.init_process_group(backend)
        self.num_processes = dist.get_world_size()
        self.process_index = dist.get_rank()
        self.local_process_index = int(os.environ.get("LOCAL_RANK", -1))
        self.set_device()

    def set_device(self):
        self.device = torch.device("cuda", self.local_process_index)
        torch.cuda.set_device(self.device)

    @property
    def is_main_process(self):
        return self.process_index == 0

    def wait_for_everyone(self):
        """Block until every process of the job reaches this point."""
        if self.num_processes > 1:
            dist.barrier(device_ids=[self.process_index])
