import os

import torch


def latlon_to_cartesian(latlon_deg: torch.Tensor) -> torch.Tensor:
    lat, lon = torch.deg2rad(latlon_deg).unbind(-1)
    return torch.stack([lat.cos() * lon.cos(), lat.cos() * lon.sin(), lat.sin()], dim=-1)


def get_distributed_device() -> torch.device:
    """This task's GPU: every task of a node sees all its GPUs, so pick by the local rank."""
    if not torch.cuda.is_available():
        return torch.device("cpu")
    local_rank = int(os.environ.get("SLURM_LOCALID", os.environ.get("LOCAL_RANK", "0")))
    return torch.device("cuda", local_rank % torch.cuda.device_count())
