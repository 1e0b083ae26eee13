"""Picks a GPU after `import torch`: works today, one import away from breaking.

PyTorch initialises CUDA lazily, so this assignment still takes effect -- until someone adds an
import (flash_attn, deepspeed, ...) or a call that initialises CUDA above it. GPU Pilot reports
GPU002 (information: it works as written) and, in the editor, offers to move the assignment above
the import.
"""
import os
import sys

import torch

gpu = sys.argv[1] if len(sys.argv) > 1 else "0"
os.environ["CUDA_VISIBLE_DEVICES"] = gpu

x = torch.randn(8, 8, device="cuda")
print("running on", torch.cuda.get_device_name(0), "sum", x.sum().item())
