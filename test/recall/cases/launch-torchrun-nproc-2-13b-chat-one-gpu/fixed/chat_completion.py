"""Interactive chat with a model-parallel checkpoint: one torchrun worker per shard."""
import os

import fire
import torch
import torch.distributed as dist


def load_shard(ckpt_dir, rank):
    shards = sorted(p for p in os.listdir(ckpt_dir) if p.endswith(".pth"))
    return torch.load(os.path.join(ckpt_dir, shards[rank]), map_location="cpu")


def main(ckpt_dir, tokenizer_path, max_seq_len=512, max_batch_size=4):
    dist.init_process_group("nccl")
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)
    state = load_shard(ckpt_dir, dist.get_rank())
    print(f"worker {dist.get_rank()} loaded {len(state)} tensors for {tokenizer_path}")
    print(f"max_seq_len={max_seq_len} max_batch_size={max_batch_size}")


if __name__ == "__main__":
    fire.Fire(main)
