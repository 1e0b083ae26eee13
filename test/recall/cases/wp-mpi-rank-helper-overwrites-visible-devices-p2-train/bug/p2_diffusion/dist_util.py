"""Distributed helpers: one MPI rank per GPU."""
import os
import socket

import torch as th
import torch.distributed as dist
from mpi4py import MPI

# The authors' nodes have eight GPUs.
GPUS_PER_NODE = 8


def setup_dist():
    """Create the process group, one process per GPU."""
    if dist.is_initialized():
        return
    os.environ["CUDA_VISIBLE_DEVICES"] = f"{MPI.COMM_WORLD.Get_rank() % GPUS_PER_NODE}"

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
    return th.device("cuda") if th.cuda.is_available() else th.device("cpu")


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return s.getsockname()[1]
