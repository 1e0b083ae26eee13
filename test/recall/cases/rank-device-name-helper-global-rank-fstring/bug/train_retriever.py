"""Contrastive fine-tuning of a sentence-embedding model with DDP, one process per GPU."""
import torch
import torch.distributed as dist
from sentence_transformers import SentenceTransformer

from device_utils import get_device_name


def main():
    dist.init_process_group("nccl")
    device = get_device_name()
    model = SentenceTransformer("sentence-transformers/all-MiniLM-L6-v2", device=device)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[torch.device(device).index])
    queries = ["how do I reset my password", "opening hours of the library"]
    emb = ddp.module.encode(queries, convert_to_tensor=True)
    print(f"rank {dist.get_rank()} on {device}: embeddings {tuple(emb.shape)}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
