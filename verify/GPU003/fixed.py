import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os

os.environ["CUDA_VISIBLE_DEVICES"] = "0"
import torch

_probe.fact("device_count", torch.cuda.device_count())
x = torch.ones(1, device="cuda")
