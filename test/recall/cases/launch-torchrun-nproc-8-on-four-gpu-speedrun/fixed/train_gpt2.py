"""GPT-2 speedrun trainer; torchrun starts one process per GPU."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

VOCAB, WIDTH, SEQ_LEN, BATCH = 50304, 768, 1024, 8

ddp_rank = int(os.environ["RANK"])
ddp_local_rank = int(os.environ["LOCAL_RANK"])
device = torch.device(f"cuda:{ddp_local_rank}")
torch.cuda.set_device(device)
print(f"using device: {device}")
dist.init_process_group(backend="nccl", device_id=device)
master_process = ddp_rank == 0

model = nn.Sequential(nn.Embedding(VOCAB, WIDTH), nn.LayerNorm(WIDTH), nn.Linear(WIDTH, VOCAB)).to(device)
model = DDP(model, device_ids=[ddp_local_rank])
optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)

generator = torch.Generator(device=device).manual_seed(1337 + ddp_rank)
for step in range(200):
    # random tokens stand in for this rank's shard of the training data
    tokens = torch.randint(0, VOCAB, (BATCH, SEQ_LEN + 1), device=device, generator=generator)
    logits = model(tokens[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    if master_process and step % 20 == 0:
        print(f"step {step}: loss {loss.item():.4f}")

dist.destroy_process_group()
