"""The same as pick_gpu.py, done right: the variable is set before anything imports torch."""
import os
import sys

os.environ["CUDA_VISIBLE_DEVICES"] = sys.argv[1] if len(sys.argv) > 1 else "0"

import torch  # noqa: E402  (must come after the environment is set)

x = torch.randn(8, 8, device="cuda")
print("running on", torch.cuda.get_device_name(0), "sum", x.sum().item())
