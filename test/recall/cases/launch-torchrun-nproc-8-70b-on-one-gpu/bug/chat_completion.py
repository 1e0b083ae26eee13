import argparse
import json
import os
from pathlib import Path

import torch
import torch.distributed as dist


def load_shard(ckpt_dir, model_parallel_size):
    shards = sorted(Path(ckpt_dir).glob("*.pth"))
    assert len(shards) == model_parallel_size, (
        f"{ckpt_dir} has {len(shards)} shards but the launch started {model_parallel_size} processes"
    )
    rank = dist.get_rank()
    with open(Path(ckpt_dir) / "params.json") as handle:
        params = json.load(handle)
    return torch.load(shards[rank], map_location="cpu"), params


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckpt_dir", required=True)
    parser.add_argument("--tokenizer_path", required=True)
    parser.add_argument("--max_seq_len", type=int, default=512)
    parser.add_argument("--max_batch_size", type=int, default=4)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)
    torch.manual_seed(1)

    state, params = load_shard(args.ckpt_dir, dist.get_world_size())
    weights = {name: tensor.cuda().half() for name, tensor in state.items()}
    print(f"rank {dist.get_rank()}: {len(weights)} tensors, dim {params['dim']}, "
          f"{args.max_batch_size} x {args.max_seq_len} tokens")


if __name__ == "__main__":
    main()
