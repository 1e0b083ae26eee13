import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
t = torch.ones(1).cuda()  # before set_device: the current device, GPU 0 in every rank
dist.all_reduce(t)
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
_probe.fact("sum", t.item())
dist.destroy_process_group()
