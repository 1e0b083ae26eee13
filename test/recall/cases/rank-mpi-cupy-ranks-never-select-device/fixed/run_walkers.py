"""Propagate a batch of random walkers on the GPU, one MPI task per GPU.

Run with: mpirun -np 4 python run_walkers.py
"""
import cupy
import numpy
from mpi4py import MPI

comm = MPI.COMM_WORLD
NWALKERS_PER_TASK = 64
NBASIS = 256
NSTEPS = 50


def propagate(walkers, hamiltonian, dt=0.01):
    # first-order propagator exp(-dt H) applied to every walker
    return walkers - dt * walkers @ hamiltonian


def main():
    rng = numpy.random.default_rng(1234 + comm.rank)
    ngpus = cupy.cuda.runtime.getDeviceCount()
    # each task takes the GPU numbered by its rank among the tasks of its node
    node_comm = comm.Split_type(MPI.COMM_TYPE_SHARED)
    cupy.cuda.runtime.setDevice(node_comm.rank)
    if comm.rank == 0 and ngpus > comm.size:
        print(f"# {ngpus} GPUs but only {comm.size} MPI tasks")

    hamiltonian = cupy.asarray(rng.standard_normal((NBASIS, NBASIS)) / NBASIS)
    walkers = cupy.asarray(rng.standard_normal((NWALKERS_PER_TASK, NBASIS)))
    for _ in range(NSTEPS):
        walkers = propagate(walkers, hamiltonian)

    local_energy = float(cupy.einsum("wi,ij,wj->", walkers, hamiltonian, walkers).get())
    total = comm.allreduce(local_energy, op=MPI.SUM)
    if comm.rank == 0:
        print(f"mean energy: {total / (comm.size * NWALKERS_PER_TASK):.6f}")


if __name__ == "__main__":
    main()
