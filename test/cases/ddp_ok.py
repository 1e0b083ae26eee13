import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(rank)
dist.init_process_group(backend="nccl")
model = DistributedDataParallel(torch.nn.Linear(8, 2).cuda(), device_ids=[rank])
