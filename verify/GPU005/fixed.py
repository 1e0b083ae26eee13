import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os
import torch

x = torch.zeros(2, device="cuda:0")  # the first visible GPU: physical GPU 1 under CUDA_VISIBLE_DEVICES=1
