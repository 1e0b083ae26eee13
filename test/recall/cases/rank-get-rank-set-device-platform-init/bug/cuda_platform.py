"""Device platform hooks for a video-generation pipeline (CUDA back end)."""
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
        torch.cuda.set_device(dist.get_rank())

    @staticmethod
    def get_device() -> str:
        return "cuda"
