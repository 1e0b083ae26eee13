"""Distributed helpers: one MPI rank per GPU."""
import os
import socket

import torch as th
import torch.distributed as dist
from mpi4py import MPI

# GPUs per node on the cluster this was written for.
GPUS_PER_NODE = 8


def setup_dist():
    if dist.is_initialized():
        return
    comm = MPI.COMM_WORLD
    os.environ["CUDA_VISIBLE_DEVICES"] = str(comm.Get_rank() % GPUS_PER_NODE)

    backend = "nccl" if th.cuda.is_available() else "gloo"
    host = socket.gethostbyname(socket.getfqdn()) if backend == "nccl" else "localhost"
    os.environ["MASTER_ADDR"] = comm.bcast(host, root=0)
    os.environ["MASTER_PORT"] = str(comm.bcast(_free_port(), root=0))
    os.environ["RANK"] = str(comm.rank)
    os.environ["WORLD_SIZE"] = str(comm.size)
    dist.init_process_group(backend=backend, init_method="env://")


def dev():
    return th.device("cuda") if th.cuda.is_available() else th.device("cpu")


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return s.getsockname()[1]
