import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os

# Started with CUDA_VISIBLE_DEVICES="" (expect.json): removed before CUDA initialises.
del os.environ["CUDA_VISIBLE_DEVICES"]
import torch

_probe.fact("available", torch.cuda.is_available())
x = torch.ones(1).cuda()
