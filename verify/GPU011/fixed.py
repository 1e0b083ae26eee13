import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os
import torch
import torch.distributed as dist

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
t = torch.ones(1).cuda()
dist.all_reduce(t)
_probe.fact("sum", t.item())
dist.destroy_process_group()
