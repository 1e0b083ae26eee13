"""Self-supervised pretraining, one process per GPU (started with torchrun)."""
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


@dataclass
class HardwareConfig:
    gpu_id: int = 0
    world_size: int = 1


def setup_distributed(hw):
    """Join the process group torchrun prepared and record this process's GPU."""
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    hw.world_size = int(os.environ.get("WORLD_SIZE", 1))
    dist.init_process_group("nccl", rank=int(os.environ.get("RANK", 0)), world_size=hw.world_size)
    hw.gpu = local_rank
    return hw


class Trainer:
    def __init__(self, hw):
        self.hw = hw
        torch.cuda.set_device(self.hw.gpu_id)
        self.device = torch.device("cuda", self.hw.gpu_id)
        backbone = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 64))
        self.model = DDP(backbone.to(self.device), device_ids=[self.hw.gpu_id])
        self.optim = torch.optim.SGD(self.model.parameters(), lr=0.05)

    def fit(self, steps=100):
        for _ in range(steps):
            x = torch.randn(32, 128, device=self.device)
            loss = self.model(x).pow(2).mean()
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()


if __name__ == "__main__":
    hardware = setup_distributed(HardwareConfig())
    Trainer(hardware).fit()
    dist.destroy_process_group()
