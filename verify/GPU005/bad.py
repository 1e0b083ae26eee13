import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os
import torch

gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "0")  # "1", set by the launcher
x = torch.zeros(2, device=f"cuda:{gpu}")
