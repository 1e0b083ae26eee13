import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os
import torch
import eager_lib  # a library that initialises CUDA when imported (as flash_attn or torch 1.12.0 did)

os.environ["CUDA_VISIBLE_DEVICES"] = "1"  # after the framework import
x = torch.ones(1, device="cuda")
