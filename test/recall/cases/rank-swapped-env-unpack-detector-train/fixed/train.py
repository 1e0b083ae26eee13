"""Detector training; launched with python -m torch.distributed.run --nnodes 2 --nproc_per_node 8."""
import argparse

import torch
import torch.distributed as dist

from envs import get_envs


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--conf-file", default="configs/detector_s.py")
    return parser.parse_args()


def main(args):
    args.local_rank, args.rank, args.world_size = get_envs()
    if args.local_rank != -1:
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
        dist.init_process_group(backend="nccl")
    else:
        device = torch.device("cuda:0")
    print("training on", device, "of", args.world_size, "processes")


if __name__ == "__main__":
    main(parse_args())
