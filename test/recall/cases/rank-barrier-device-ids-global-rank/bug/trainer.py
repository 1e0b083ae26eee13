"""Detection trainer; one process per GPU under torchrun, possibly on several nodes."""
import os

import torch

from torch_utils import torch_distributed_zero_first

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))
RANK = int(os.getenv("RANK", -1))


def build_dataset(path):
    return list(range(1000))


def get_dataloader(path, batch_size=16):
    with torch_distributed_zero_first(RANK):
        dataset = build_dataset(path)
    return torch.utils.data.DataLoader(dataset, batch_size=batch_size)
