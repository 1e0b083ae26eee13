import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os
import torch
import torch.distributed as dist

dist.init_process_group("nccl")  # no device_id: CUDA is not initialised here
cuda_after_init = torch.cuda.is_initialized()
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)  # after the init, before any CUDA work
_probe.fact("cuda_initialised_after_init", cuda_after_init)
t = torch.ones(1).cuda()
dist.all_reduce(t)
_probe.fact("sum", t.item())
dist.destroy_process_group()
