import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os

os.putenv("CUDA_VISIBLE_DEVICES", "1")  # not os.environ: torch and the CUDA runtime disagree
import torch

x = torch.ones(1, device="cuda")
