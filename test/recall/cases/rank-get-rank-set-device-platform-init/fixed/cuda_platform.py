"""Device platform hooks for a video-generation pipeline (CUDA back end)."""
import os

import torch
import torch.distributed as dist


class CudaPlatform:
    device_name = "cuda"

    @staticmethod
    def is_available() -> bool:
        return torch.cuda.is_available()

    @staticmethod
    def init_parallel_env():
        dist.init_process_group(backend="nccl")
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))

    @staticmethod
    def get_device() -> str:
        return "cuda"
