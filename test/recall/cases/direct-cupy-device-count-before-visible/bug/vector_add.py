import os

import cupy as cp

REQUESTED_GPUS = [3, 2]

available = cp.cuda.runtime.getDeviceCount()
for gpu in REQUESTED_GPUS:
    if gpu >= available:
        raise SystemExit(f"GPU {gpu} requested but only {available} present")
os.environ["CUDA_VISIBLE_DEVICES"] = "3,2"

KERNEL_SRC = r"""
extern "C" __global__ void vec_add(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}
"""

module = cp.RawModule(code=KERNEL_SRC)
vec_add = module.get_function("vec_add")

n = 1 << 22
a = cp.random.rand(n, dtype=cp.float32)
b = cp.random.rand(n, dtype=cp.float32)
out = cp.empty_like(a)
vec_add(((n + 255) // 256,), (256,), (a, b, out, cp.int32(n)))
print(float(out.sum()))
