import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os
import torch

print("cuda available:", torch.cuda.is_available())
os.environ["CUDA_VISIBLE_DEVICES"] = "1"  # too late: is_available() initialised CUDA
x = torch.ones(1, device="cuda")
_probe.fact("device_count_after_write", torch.cuda.device_count())
