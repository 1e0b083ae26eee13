"""Vision-language supervised fine-tuning; torchrun starts one worker per GPU."""
import os

import torch
import torch.distributed as dist

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
print("worker", dist.get_rank(), "of", dist.get_world_size())
