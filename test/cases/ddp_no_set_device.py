import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def main():
    dist.init_process_group(backend="nccl")
    model = DistributedDataParallel(torch.nn.Linear(8, 2).cuda())
    return model
