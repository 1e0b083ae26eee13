"""Helpers shared by the federated-learning server and its clients."""
import os

import numpy as np
import pynvml
import torch


def get_optimal_cuda_device(use_cuda: bool) -> torch.device:
    """Pick the visible GPU with the most free memory (CPU if CUDA is off)."""
    if not use_cuda or not torch.cuda.is_available():
        return torch.device("cpu")
    pynvml.nvmlInit()
    if "CUDA_VISIBLE_DEVICES" in os.environ:
        gpu_ids = [int(i) for i in os.environ["CUDA_VISIBLE_DEVICES"].split(",")]
        assert max(gpu_ids) < torch.cuda.device_count()
    else:
        gpu_ids = range(torch.cuda.device_count())

    free = []
    for gpu_id in gpu_ids:
        handle = pynvml.nvmlDeviceGetHandleByIndex(gpu_id)
        free.append(pynvml.nvmlDeviceGetMemoryInfo(handle).free)
    return torch.device(f"cuda:{int(np.argmax(free))}")
