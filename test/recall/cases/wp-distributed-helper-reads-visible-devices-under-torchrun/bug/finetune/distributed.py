"""Process-group helpers for the fine-tuning entry point (torchrun or Slurm)."""
import logging
import os

import torch
import torch.distributed as dist

logger = logging.getLogger("distributed")
BACKEND = "nccl"


def visible_devices():
    """Physical ids of the GPUs this process may use."""
    return [int(i) for i in os.environ["CUDA_VISIBLE_DEVICES"].split(",")]


def set_device():
    gpus = visible_devices()
    local_rank = int(os.environ["LOCAL_RANK"])
    logger.info("visible GPUs %s, local rank %d", gpus, local_rank)
    if len(gpus) != torch.cuda.device_count():
        raise RuntimeError(f"{len(gpus)} GPUs listed, CUDA sees {torch.cuda.device_count()}")
    # one GPU per task (Slurm --gpus-per-task=1): it is always device 0
    torch.cuda.set_device(0 if len(gpus) == 1 else local_rank)


def get_rank():
    return dist.get_rank() if dist.is_initialized() else 0


def avg_aggregate(value):
    buf = torch.tensor([value], dtype=torch.float32, device="cuda")
    dist.all_reduce(buf)
    return buf.item() / dist.get_world_size()
