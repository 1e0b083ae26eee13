import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os

os.environ["CUDA_VISIBLE_DEVICES"] = "1"
import torch
import eager_lib

x = torch.ones(1, device="cuda")
