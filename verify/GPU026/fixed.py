import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os

os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "backend:cudaMallocAsync"
import torch

x = torch.ones(1, device="cuda")
_probe.fact("allocator_backend", torch.cuda.get_allocator_backend())
