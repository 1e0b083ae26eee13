"""Interatomic-potential training; srun starts one task per GPU."""
import argparse
import os

import torch
import torch.distributed as dist


def init_distributed():
    rank = int(os.environ["SLURM_PROCID"])
    local_rank = int(os.environ["SLURM_LOCALID"])
    world_size = int(os.environ["SLURM_NTASKS"])
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    return rank, local_rank, world_size


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--distributed", action="store_true")
    args = parser.parse_args()
    if args.distributed:
        rank, local_rank, world_size = init_distributed()
        print(f"Trying to set device to {local_rank}")
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cuda")
    print("training on", device)


if __name__ == "__main__":
    main()
