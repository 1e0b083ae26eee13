"""Distributed setup shared by the pretraining and fine-tuning entry points."""
import os

import torch
import torch.distributed as dist


def init_distributed_mode(args):
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        args.rank = int(os.environ["RANK"])
        args.world_size = int(os.environ["WORLD_SIZE"])
        args.gpu = int(os.environ["LOCAL_RANK"])
    else:
        print("Not using distributed mode")
        args.distributed = False
        return
    args.distributed = True
    torch.cuda.set_device(args.gpu)
    print(f"| distributed init (rank {args.rank}) on GPU {args.gpu}", flush=True)
    dist.init_process_group(backend="nccl", world_size=args.world_size, rank=args.rank)
    dist.barrier()
