import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os

os.environ["CUDA_VISIBLE_DEVICES"] = "1"
import torch

warm = torch.zeros(1).cuda()
x = torch.ones(1, device="cuda")
