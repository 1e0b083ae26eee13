"""Singing-voice conversion training (teacher model)."""
import argparse

import torch
import torch.multiprocessing as mp


def run(rank, n_gpus, hps):
    torch.cuda.set_device(rank)
    print(f"rank {rank}/{n_gpus} training with {hps}")


def main():
    assert torch.cuda.is_available(), "CPU training is not allowed."
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--config", default="configs/diffusion.yaml")
    args = parser.parse_args()
    n_gpus = torch.cuda.device_count()
    mp.spawn(run, nprocs=n_gpus, args=(n_gpus, args.config))


if __name__ == "__main__":
    main()
