import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import torch
import torch.distributed as dist

dist.init_process_group("nccl")  # no set_device(local_rank)
t = torch.ones(1).cuda()  # every rank on cuda:0
dist.all_reduce(t)
_probe.fact("sum", t.item())
dist.destroy_process_group()
