"""Fine-tune a pretrained reaction model on several GPUs."""
import argparse
import os

import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data")
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()

    local_rank = int(os.environ.get("LOCAL_RANK", os.environ.get("SLURM_LOCALID", "0")))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    print(f"rank {dist.get_rank()} fine-tuning on {args.data} for {args.epochs} epochs")


if __name__ == "__main__":
    main()
