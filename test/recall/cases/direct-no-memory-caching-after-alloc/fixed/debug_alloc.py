import os

# Chasing a suspected leak: the run should bypass PyTorch's caching allocator.
# The allocator reads this once, before the first CUDA allocation.
os.environ["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"

import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 10)).to("cuda")
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

for step in range(200):
    x = torch.randn(64, 512, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 20 == 0:
        print(step, torch.cuda.memory_allocated(), torch.cuda.memory_reserved())
