"""FSDP fine-tuning entry point, started with torchrun on every node."""
import os

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from transformers import AutoModelForCausalLM


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])

    torch.cuda.set_device(local_rank)
    torch.cuda.empty_cache()

    model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-7b-hf")
    model = FSDP(model, device_id=torch.cuda.current_device())
    if rank == 0:
        print(f"training on {world_size} processes, this one is local rank {local_rank}")


if __name__ == "__main__":
    main()
