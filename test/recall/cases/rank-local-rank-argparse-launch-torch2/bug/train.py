"""ImageNet training script (timm style)."""
import argparse

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser(description="ImageNet training")
parser.add_argument("data_dir", metavar="DIR")
parser.add_argument("--model", default="convformer_s18")
parser.add_argument("-b", "--batch-size", type=int, default=128)
parser.add_argument("--local_rank", default=0, type=int)


def main():
    args = parser.parse_args()
    args.distributed = torch.cuda.device_count() > 1
    if args.distributed:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend="nccl", init_method="env://")
    print("local rank", args.local_rank)


if __name__ == "__main__":
    main()
