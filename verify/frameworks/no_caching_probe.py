"""When does torch read PYTORCH_NO_CUDA_MEMORY_CACHING? Measured on ONE GPU.

For each point (before ``import torch``, after an initialising call, after a first tensor), a fresh
interpreter writes ``PYTORCH_NO_CUDA_MEMORY_CACHING=1`` there, then allocates 64 MiB on cuda and
frees it. With caching on, the freed 64 MiB stay reserved (``torch.cuda.memory_reserved()`` grows by
at least 64 MiB); with caching off the block went straight back to cudaFree and nothing is reserved
for it. Source read: pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp ``forceUncachedAllocator()``
keeps ``getenv("PYTORCH_NO_CUDA_MEMORY_CACHING")`` in a function-local static on its first call,
which is the first allocation.

usage: python3 verify/frameworks/no_caching_probe.py --out results.json
"""
import argparse
import json
import subprocess
import sys

POINTS = [
    ("before import torch", None),
    ("after import torch", "pass"),
    ("after cuda.is_available", "torch.cuda.is_available()"),
    ("after cuda.get_device_name", "torch.cuda.get_device_name(0)"),
    ("after cuda.set_device", "torch.cuda.set_device(0)"),
    ("after cuda.mem_get_info", "torch.cuda.mem_get_info()"),
    ("after cuda.synchronize", "torch.cuda.synchronize()"),
    ("after tensor", "_y = torch.ones(1, device='cuda')"),
    ("after module.to(cuda)", "_m = torch.nn.Linear(4, 4).to('cuda')"),
]

TEMPLATE = r'''
import os, json
R = {}
if __BEFORE__:
    os.environ["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"
import torch
if not __BEFORE__:
    __CALL__
    os.environ["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"
r0 = torch.cuda.memory_reserved()
x = torch.empty(64 * 2**20, dtype=torch.uint8, device="cuda")
del x
r1 = torch.cuda.memory_reserved()
R["reserved_growth_mib"] = (r1 - r0) / 2**20
R["caching_off"] = (r1 - r0) < 64 * 2**20
print("@@RESULT " + json.dumps(R), flush=True)
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import torch
    cases = []
    for name, call in POINTS:
        src = TEMPLATE.replace("__BEFORE__", "True" if call is None else "False").replace("__CALL__", call or "pass")
        p = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=240)
        res = {"case": name, "rc": p.returncode}
        for line in p.stdout.splitlines():
            if line.startswith("@@RESULT "):
                res.update(json.loads(line[9:]))
        if "caching_off" not in res:
            res["stderr_tail"] = p.stderr[-400:]
        print(res, flush=True)
        cases.append(res)
    with open(a.out, "w") as f:
        json.dump({"environment": {"torch": torch.__version__}, "method": __doc__.strip().splitlines()[0],
                   "cases": cases}, f, indent=1)


if __name__ == "__main__":
    main()
