"""Detector training; --device picks the GPUs, torch.distributed.launch starts the workers."""
import argparse
import os

parser = argparse.ArgumentParser()
parser.add_argument("--batch", type=int, default=32)
parser.add_argument("--conf", default="configs/detector_s.py")
parser.add_argument("--data", default="data/dataset.yaml")
parser.add_argument("--device", default="0", help="cuda device(s), i.e. 0 or 0,1,2,3")
parser.add_argument("--local_rank", "--local-rank", dest="local_rank", type=int, default=-1)
args = parser.parse_args()

os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
os.environ["CUDA_VISIBLE_DEVICES"] = args.device

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

local_rank = int(os.environ.get("LOCAL_RANK", args.local_rank))
if local_rank != -1:
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
print(f"Using {torch.cuda.device_count()} GPU for training...")
