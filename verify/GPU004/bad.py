import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os

os.environ["CUDA_VISIBLE_DEVICES"] = "1"
import torch

torch.cuda.set_device(1)  # only cuda:0 exists now
x = torch.ones(1, device="cuda")
