"""Values the launcher (deepspeed or torchrun) puts in each process's environment."""
import os


def get_local_rank() -> int:
    return int(os.environ.get("LOCAL_RANK", 0))


def get_global_rank() -> int:
    return int(os.environ.get("RANK", 0))


def get_world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", 1))
