"""Time FlashInfer's RMSNorm against the eager PyTorch version on one GPU."""
import os

import torch
import flashinfer

# Run on the idle card; GPU 0 is serving a model.
os.environ["CUDA_VISIBLE_DEVICES"] = "1"

HIDDEN = 8192
x = torch.randn(4096, HIDDEN, dtype=torch.bfloat16, device="cuda")
weight = torch.rand(HIDDEN, dtype=torch.bfloat16, device="cuda")


def eager_rmsnorm(x, weight, eps=1e-6):
    variance = x.float().pow(2).mean(-1, keepdim=True)
    return (x.float() * torch.rsqrt(variance + eps)).to(x.dtype) * weight


def time_ms(fn, iters=100):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


print(torch.cuda.get_device_name(0))
print("flashinfer", time_ms(lambda: flashinfer.rmsnorm(x, weight, eps=1e-6)), "ms")
print("eager     ", time_ms(lambda: eager_rmsnorm(x, weight)), "ms")
