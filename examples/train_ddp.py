"""Data-parallel training launched with torchrun, done right.

    torchrun --standalone --nproc_per_node=2 train_ddp.py

torchrun starts one process per GPU and sets LOCAL_RANK; each process binds to `cuda:LOCAL_RANK`.
GPU selection is left to the launcher (`CUDA_VISIBLE_DEVICES=0,1 torchrun ...`, or GPU Pilot's
"Run Active File on Selected GPUs"), so this file never touches CUDA_VISIBLE_DEVICES.
"""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main() -> None:
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    device = torch.device("cuda", local_rank)

    data = TensorDataset(torch.randn(4096, 32), torch.randint(0, 10, (4096,)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=64, sampler=sampler)

    model = DDP(nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 10)).to(device), device_ids=[local_rank])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
