"""Pick the device this process should put its model on."""
import torch


def get_device_name() -> str:
    """'cuda:N' for a distributed worker, else 'cuda', 'mps' or 'cpu'."""
    if torch.cuda.is_available():
        if torch.distributed.is_initialized():
            # one GPU per process: the process's rank is its GPU
            rank = torch.distributed.get_rank()
            return f"cuda:{rank}"
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"
