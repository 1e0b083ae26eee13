"""Distributed helpers: one MPI rank per GPU."""
import os
import socket

import torch as th
import torch.distributed as dist
from mpi4py import MPI

_device = th.device("cpu")


def setup_dist():
    # CUDA_VISIBLE_DEVICES is left as the user or the launcher set it: each rank takes
    # one of the GPUs it can see, by its rank on this node.
    global _device
    if dist.is_initialized():
        return
    comm = MPI.COMM_WORLD
    local_rank = comm.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()
    if th.cuda.is_available():
        _device = th.device("cuda", local_rank % th.cuda.device_count())
        th.cuda.set_device(_device)

    backend = "nccl" if th.cuda.is_available() else "gloo"
    host = socket.gethostbyname(socket.getfqdn()) if backend == "nccl" else "localhost"
    os.environ["MASTER_ADDR"] = comm.bcast(host, root=0)
    os.environ["MASTER_PORT"] = str(comm.bcast(_free_port(), root=0))
    os.environ["RANK"] = str(comm.rank)
    os.environ["WORLD_SIZE"] = str(comm.size)
    dist.init_process_group(backend=backend, init_method="env://")


def dev():
    return _device


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return s.getsockname()[1]
