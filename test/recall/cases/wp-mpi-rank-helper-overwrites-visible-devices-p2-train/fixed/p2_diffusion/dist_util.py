"""Distributed helpers: one MPI rank per GPU."""
import os
import socket

import torch as th
import torch.distributed as dist
from mpi4py import MPI


def setup_dist():
    """Create the process group, one process per GPU."""
    if dist.is_initialized():
        return
    # Leave CUDA_VISIBLE_DEVICES to the user; each rank picks among the visible GPUs in dev().

    comm = MPI.COMM_WORLD
    hostname = "localhost" if comm.Get_size() == 1 else socket.gethostbyname(socket.getfqdn())
    os.environ["MASTER_ADDR"] = comm.bcast(hostname, root=0)
    os.environ["RANK"] = str(comm.rank)
    os.environ["WORLD_SIZE"] = str(comm.size)
    os.environ["MASTER_PORT"] = str(comm.bcast(_free_port(), root=0))
    backend = "nccl" if th.cuda.is_available() else "gloo"
    dist.init_process_group(backend=backend, init_method="env://")


def dev():
    """The device this process trains on."""
    if not th.cuda.is_available():
        return th.device("cpu")
    local_rank = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()
    return th.device("cuda", local_rank % th.cuda.device_count())


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return s.getsockname()[1]
