"""Pick the device this process should put its model on."""
import os

import torch


def get_device_name() -> str:
    """'cuda:N' for a distributed worker, else 'cuda', 'mps' or 'cpu'."""
    if torch.cuda.is_available():
        if "LOCAL_RANK" in os.environ:
            # one GPU per process: the process's rank on its node is its GPU
            local_rank = int(os.environ["LOCAL_RANK"])
            return f"cuda:{local_rank}"
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"
