import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os

import torch

# Started with CUDA_VISIBLE_DEVICES="" (expect.json): every GPU hidden.
_probe.fact("available_before_delete", torch.cuda.is_available())  # CUDA initialises, seeing no GPU
del os.environ["CUDA_VISIBLE_DEVICES"]  # GPU001: too late, CUDA already read the variable
_probe.fact("counts_gpus_after_delete", torch.cuda.device_count() > 0)  # NVML re-reads the environment
x = torch.ones(1).cuda()  # still no GPU in this process, whatever device_count() says
