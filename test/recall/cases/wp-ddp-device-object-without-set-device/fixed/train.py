"""Train the potential-energy model with DDP (torchrun --nproc_per_node=N train.py)."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from env import DEVICE, LOCAL_RANK


def train(steps=1000):
    torch.cuda.set_device(DEVICE)
    dist.init_process_group(backend="nccl")
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.Tanh(), torch.nn.Linear(128, 1)).to(DEVICE)
    model = DDP(model, device_ids=[LOCAL_RANK])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(steps):
        coords = torch.randn(512, 64, device=DEVICE)
        energy = torch.randn(512, 1, device=DEVICE)
        loss = torch.nn.functional.mse_loss(model(coords), energy)
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    train()
