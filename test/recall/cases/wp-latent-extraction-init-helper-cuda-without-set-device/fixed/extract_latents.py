"""Encode every audio clip into VAE latents, one torchrun process per GPU."""
import os
from argparse import ArgumentParser
from pathlib import Path

import torch
import torch.distributed as distributed
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

local_rank = int(os.environ["LOCAL_RANK"])
world_size = int(os.environ["WORLD_SIZE"])


def distributed_setup():
    distributed.init_process_group(backend="nccl")
    rank = distributed.get_rank()
    print(f"initialised rank {rank} of {distributed.get_world_size()}")
    return rank


@torch.inference_mode()
def main():
    rank = distributed_setup()

    parser = ArgumentParser()
    parser.add_argument("--out_dir", type=Path, default=Path("latents"))
    parser.add_argument("--batch_size", type=int, default=32)
    args = parser.parse_args()

    # one GPU per process: select it before any CUDA work
    torch.cuda.set_device(local_rank)
    encoder = torch.nn.Sequential(torch.nn.Conv1d(1, 16, 9, stride=4), torch.nn.GELU()).eval().cuda()
    clips = TensorDataset(torch.randn(512, 1, 16000))
    loader = DataLoader(clips, batch_size=args.batch_size,
                        sampler=DistributedSampler(clips, rank=rank, num_replicas=world_size))

    latents = []
    for (waveforms,) in loader:
        latents.append(encoder(waveforms.cuda()).cpu())

    args.out_dir.mkdir(parents=True, exist_ok=True)
    torch.save(torch.cat(latents), args.out_dir / f"latents_{rank}.pt")
    distributed.barrier()
    distributed.destroy_process_group()


if __name__ == "__main__":
    main()
