import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os

os.environ["CUDA_VISIBLE_DEVICES"] = "0  # the first GPU"  # as IPython's %env keeps a comment
import torch

t = torch.ones(1).cuda()
