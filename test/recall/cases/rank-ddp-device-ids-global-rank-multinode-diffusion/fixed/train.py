"""Class-conditional diffusion transformer training with DDP (torchrun, one process per GPU)."""
import argparse

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class TinyDiT(torch.nn.Module):
    def __init__(self, hidden=384, classes=1000):
        super().__init__()
        self.embed = torch.nn.Embedding(classes, hidden)
        self.blocks = torch.nn.Sequential(*[torch.nn.Linear(hidden, hidden) for _ in range(4)])

    def forward(self, x, y):
        return self.blocks(x + self.embed(y))


def main(args):
    assert torch.cuda.is_available(), "training needs at least one GPU"
    dist.init_process_group("nccl")
    assert args.global_batch_size % dist.get_world_size() == 0
    rank = dist.get_rank()
    device = rank % torch.cuda.device_count()
    seed = args.global_seed * dist.get_world_size() + rank
    torch.manual_seed(seed)
    torch.cuda.set_device(device)
    print(f"starting rank={rank}, seed={seed}, world_size={dist.get_world_size()}")

    model = TinyDiT()
    ema = TinyDiT().to(device)
    ema.load_state_dict(model.state_dict())
    for p in ema.parameters():
        p.requires_grad_(False)

    # the EMA copy stays outside DDP; the trained model is wrapped
    model = model.to(device)
    model = DDP(model, device_ids=[device])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0)

    local_batch = args.global_batch_size // dist.get_world_size()
    for step in range(args.steps):
        x = torch.randn(local_batch, 384, device=device)
        y = torch.randint(0, 1000, (local_batch,), device=device)
        loss = model(x, y).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--global-batch-size", type=int, default=256)
    parser.add_argument("--global-seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=1000)
    main(parser.parse_args())
