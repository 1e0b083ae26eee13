"""Pre-training entry point: one torchrun worker per GPU."""
import argparse
import os

import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--job.config_file", dest="config_file")
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device(f"cuda:{local_rank}")
    torch.cuda.set_device(device)
    dist.init_process_group("nccl")
    print(f"rank {dist.get_rank()} of {dist.get_world_size()} on {device}, config {args.config_file}")


if __name__ == "__main__":
    main()
