"""Time allocation churn with CUDA's stream-ordered allocator."""
import time

import torch
import os

os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "backend:cudaMallocAsync"

x = torch.randn(1).cuda()
start = time.perf_counter()
for _ in range(1000):
    y = torch.empty(64 * 1024 * 1024, device="cuda")
    del y
torch.cuda.synchronize()
print(torch.cuda.get_allocator_backend(), time.perf_counter() - start)
