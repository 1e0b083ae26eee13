"""Measures two claims on one GPU (session of 2026-12-07), each in fresh interpreters:

1. torch.load restores CUDA storages to the ordinal they were saved from (map_location absent):
   a checkpoint whose storages are tagged cuda:1 fails to load on a one-GPU machine, with and
   without weights_only; map_location="cpu" / "cuda:0" / a torch.device loads it. The cuda:1 tag is
   written by re-packing a cuda:0 checkpoint with the location string replaced (same length), which
   is what a two-GPU machine's `torch.save` of a cuda:1 tensor writes.
2. Several processes that never select a device share the first GPU: two JAX processes started at
   once with default preallocation (75 % of the GPU each), and the same with
   XLA_PYTHON_CLIENT_PREALLOCATE=false; two CuPy processes; two torch processes.

usage: python3 restore_and_shared_gpu_probe.py --out results.json
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import zipfile

TIMEOUT_S = 180


def run(code: str, env: dict | None = None) -> dict:
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=TIMEOUT_S)
    return {"rc": p.returncode, "stdout": p.stdout[-2000:], "stderr": p.stderr[-3000:]}


def retag(src: str, dst: str, old: bytes, new: bytes) -> int:
    """Copies a torch zip checkpoint, replacing the location string in its pickle; returns the count."""
    assert len(old) == len(new)
    n = 0
    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w", compression=zipfile.ZIP_STORED) as zo:
        for item in zi.infolist():
            data = zi.read(item.filename)
            if item.filename.endswith("data.pkl"):
                n = data.count(old)
                data = data.replace(old, new)
            zo.writestr(item, data)
    return n


def restore(tmp: str) -> dict:
    out = {}
    src = os.path.join(tmp, "cuda0.pt")
    dst = os.path.join(tmp, "cuda1.pt")
    out["save"] = run(
        "import torch; m = torch.nn.Linear(4, 4).cuda();"
        f"torch.save(m.state_dict(), {src!r}); print(torch.__version__, torch.cuda.device_count())"
    )
    out["retagged"] = retag(src, dst, b"cuda:0", b"cuda:1")
    load = "import torch; sd = torch.load({p!r}{kw}); print(sorted({{str(v.device) for v in sd.values()}}))"
    cases = {
        "cuda0_plain": (src, ""),
        "cuda1_plain": (dst, ""),
        "cuda1_weights_only_true": (dst, ", weights_only=True"),
        "cuda1_weights_only_false": (dst, ", weights_only=False"),
        "cuda1_map_cpu": (dst, ", map_location='cpu'"),
        "cuda1_map_cuda0": (dst, ", map_location='cuda:0'"),
        "cuda1_map_device": (dst, ", map_location=torch.device('cuda', 0)"),
    }
    for name, (path, kw) in cases.items():
        out[name] = run(load.format(p=path, kw=kw))
    # After set_device(0) (the only GPU) the tag still decides: a cuda:1 checkpoint still fails.
    out["cuda1_after_set_device0"] = run(
        f"import torch; torch.cuda.set_device(0); sd = torch.load({dst!r}); print('loaded')"
    )
    return out


def concurrent(code: str, env: dict | None = None, n: int = 2) -> list:
    e = dict(os.environ)
    e.update(env or {})
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
        for _ in range(n)
    ]
    res = []
    for p in procs:
        try:
            so, se = p.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            p.kill()
            so, se = p.communicate()
        res.append({"rc": p.returncode, "stdout": so[-2000:], "stderr": se[-3000:]})
    return res


JAX = (
    "import time, jax, jax.numpy as jnp;"
    "x = jnp.ones((1024, 1024)); y = (x @ x).block_until_ready();"
    "print(jax.devices(), float(y[0, 0]), flush=True);"
    "big = jnp.ones((int(2.5e9),), dtype=jnp.float32).block_until_ready();"  # 10 GB of work memory
    "print('big ok', flush=True); time.sleep(8)"
)
CUPY = (
    "import time, cupy; a = cupy.ones((1024,1024)); print(cupy.cuda.runtime.getDevice(), float((a@a)[0,0]), flush=True);"
    "time.sleep(8)"
)
TORCH = (
    "import time, torch; a = torch.ones(1024, 1024, device='cuda'); print(a.device, float((a@a)[0,0]), flush=True);"
    "time.sleep(8)"
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    res = {}
    res["smi"] = subprocess.run(
        ["nvidia-smi", "--query-gpu=index,name,memory.total,driver_version", "--format=csv,noheader"],
        capture_output=True, text=True
    ).stdout
    with tempfile.TemporaryDirectory() as tmp:
        res["restore"] = restore(tmp)
    res["jax_default_prealloc"] = concurrent(JAX)
    res["jax_no_prealloc"] = concurrent(JAX, {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"})
    res["cupy"] = concurrent(CUPY)
    res["torch"] = concurrent(TORCH)
    res["versions"] = run(
        "import torch, jax, cupy; print(torch.__version__, torch.version.cuda, jax.__version__, cupy.__version__)"
    )
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    for k, v in res.items():
        print(k, json.dumps(v)[:600])


if __name__ == "__main__":
    main()
