import os

import torch
import torch.nn as nn

# Chasing a suspected leak: the run should bypass PyTorch's caching allocator.
model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 10)).to("cuda")
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

os.environ["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"

for step in range(200):
    x = torch.randn(64, 512, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 20 == 0:
        print(step, torch.cuda.memory_allocated(), torch.cuda.memory_reserved())
