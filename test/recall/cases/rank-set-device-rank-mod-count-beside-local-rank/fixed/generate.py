"""Sample images with a diffusion transformer split over the processes of a torchrun job."""
import os

import torch
import torch.distributed as dist

from parallel_state import init_distributed_environment


def main():
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    device = init_distributed_environment(world_size=world_size, rank=rank)
    model = torch.nn.Linear(1024, 1024).to(device)
    latents = torch.randn(4, 1024, device=device)
    with torch.no_grad():
        out = model(latents)
    dist.all_reduce(out)
    if rank == 0:
        print("sampled", out.shape)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
