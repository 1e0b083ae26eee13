import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def setup(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("nccl", rank=rank, world_size=world_size)


def train(rank, world_size, port):
    torch.cuda.set_device(rank)
    setup(rank, world_size, port)
    device = torch.device(rank)

    generator = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 3)).to(device)
    discriminator = nn.Sequential(nn.Linear(3, 256), nn.ReLU(), nn.Linear(256, 1)).to(device)
    generator_ddp = DDP(generator, device_ids=[rank])
    discriminator_ddp = DDP(discriminator, device_ids=[rank])

    opt_g = torch.optim.Adam(generator_ddp.parameters(), lr=2e-5)
    opt_d = torch.optim.Adam(discriminator_ddp.parameters(), lr=2e-4)
    for _ in range(100):
        z = torch.randn(64, 256, device=device)
        fake = generator_ddp(z)
        loss_d = discriminator_ddp(fake.detach()).mean()
        opt_d.zero_grad()
        loss_d.backward()
        opt_d.step()
        loss_g = -discriminator_ddp(fake).mean()
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    num_gpus = torch.cuda.device_count()
    mp.spawn(train, args=(num_gpus, 12355), nprocs=num_gpus, join=True)
