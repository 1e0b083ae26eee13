import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os

os.environ["CUDA_VISIBLE_DEVICES"] = "# GPU 1,1"  # text before the first id: CUDA sees no GPU
import torch

t = torch.ones(1).cuda()
