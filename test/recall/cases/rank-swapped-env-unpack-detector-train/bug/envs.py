import os


def get_envs():
    """Read the distributed environment that torchrun sets."""
    local_rank = int(os.getenv("LOCAL_RANK", -1))
    rank = int(os.getenv("RANK", -1))
    world_size = int(os.getenv("WORLD_SIZE", 1))
    return local_rank, rank, world_size
