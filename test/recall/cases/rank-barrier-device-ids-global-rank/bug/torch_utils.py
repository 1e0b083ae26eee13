from contextlib import contextmanager

import torch.distributed as dist


@contextmanager
def torch_distributed_zero_first(local_rank: int):
    """Let the first process of each node prepare the data while the others wait."""
    initialized = dist.is_available() and dist.is_initialized()
    if initialized and local_rank not in {-1, 0}:
        dist.barrier(device_ids=[local_rank])
    yield
    if initialized and local_rank == 0:
        dist.barrier(device_ids=[local_rank])
