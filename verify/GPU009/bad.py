import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os
import sys
import torch

warm = torch.zeros(1).cuda()
os.environ["CUDA_VISIBLE_DEVICES"] = "1"
del sys.modules["torch"]
import torch  # noqa: E402 - the reimport changes nothing: CUDA stays initialised

_probe.fact("device_count_after_reimport", torch.cuda.device_count())
x = torch.ones(1, device="cuda")
