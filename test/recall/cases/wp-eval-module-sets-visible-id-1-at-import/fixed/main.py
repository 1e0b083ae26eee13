"""Train a conditional diffusion GAN that translates edge maps into MR images."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn

from tool.eval_score import psnr


def train(gpu, args):
    device = torch.device(f"cuda:{gpu}")
    net_g = nn.Sequential(nn.Conv2d(2, 64, 3, padding=1), nn.SiLU(), nn.Conv2d(64, 1, 3, padding=1)).to(device)
    opt = torch.optim.Adam(net_g.parameters(), lr=args.lr_g, betas=(0.5, 0.9))
    for epoch in range(args.num_epoch):
        edges = torch.rand(args.batch_size, 1, 192, 192, device=device)
        target = torch.rand(args.batch_size, 1, 192, 192, device=device)
        fake = net_g(torch.cat([edges, torch.randn_like(edges)], dim=1))
        loss = (fake - target).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}, psnr {psnr(fake.detach(), target):.2f}")


def init_processes(rank, size, fn, args):
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(backend="nccl", init_method="tcp://127.0.0.1:2139", rank=rank, world_size=size)
    fn(args.local_rank, args)
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser("edge-to-MR diffusion GAN")
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--num_epoch", type=int, default=200)
    parser.add_argument("--lr_g", type=float, default=1.5e-4)
    args = parser.parse_args()
    init_processes(0, 1, train, args)
