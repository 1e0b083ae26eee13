"""Which libraries and framework helpers initialise CUDA, measured on ONE GPU (issue 47).

Every case runs in a fresh interpreter. After the case's code (an import, or a helper call) two
things are asked, each in its own interpreter:

* ``cvd``: write ``CUDA_VISIBLE_DEVICES=""`` into ``os.environ``, then allocate on cuda. The
  allocation works only if the code before had already made the CUDA runtime read the variable
  ("frozen"); the method of ``verify/frameworks/probe.py``.
* ``alloc``: write ``PYTORCH_CUDA_ALLOC_CONF=bogus_option:1``, then allocate. torch rejects the
  unknown option when its allocator reads the variable; an allocation that works means the
  allocator was configured before the write (the catalogue's depth ``driver`` or ``context``).

Each result also records ``torch.cuda.is_initialized()`` right after the case's code (depth
``context`` when true), the library's ``__version__``, and an import error if any.

Library sources travel as folders (no package index reaches the GPU machine): ``--fw DIR`` holds
one folder per library version (``kornia-0.6.8/kornia`` ...), extracted from the upstream
repository at a tag; ``CASES`` names the folders each case puts on ``sys.path``.

usage: python3 verify/frameworks/import_probe.py --fw .fw --out results.json [--jobs 12]
Writes {"environment": ..., "method": ..., "cases": [...]}.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time

MARK = "@@RESULT "

# (id, folders under --fw to put first on sys.path, extra environment, code).
_DS = ["deps"]
_KRS = ["stub-kornia_rs"]
_DIST_ENV = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29531", "RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0"}
CASES = [
    ("import kornia (v0.6.8)", ["kornia-0.6.8"] + _KRS, {}, "import kornia as M"),
    ("import kornia (b4f5a78a13, 2026-08)", ["kornia-head"] + _KRS, {}, "import kornia as M"),
    ("import monai (1.3.0)", ["monai-1.3.0"], {}, "import monai as M"),
    ("import monai (d388d1c6fe, 2025-06)", ["monai-head"], {}, "import monai as M"),
    ("import deepspeed (v0.14.0)", ["deepspeed-v0.14.0"] + _DS, {}, "import deepspeed as M"),
    ("import deepspeed (v0.14.1)", ["deepspeed-v0.14.1"] + _DS, {}, "import deepspeed as M"),
    ("import deepspeed (38327e07f6, 2025-02)", ["deepspeed-head"] + _DS, {}, "import deepspeed as M"),
    ("import deepspeed (38327e07f6) DS_ACCELERATOR=cuda", ["deepspeed-head"] + _DS, {"DS_ACCELERATOR": "cuda"},
     "import deepspeed as M"),
    ("import bitsandbytes (95f9af309d, 2026-08, no native library)", ["bnb-head"], {}, "import bitsandbytes as M"),
    ("import xformers (ca6d2aa0d4, 2026-04, no compiled _C)", ["xformers-head"], {}, "import xformers as M"),
    ("import apex (6424da3b4f, 2026-07, Python only)", ["apex-head"], {}, "import apex as M"),
    ("import torch_geometric", [], {}, "import torch_geometric as M"),
    # framework helpers that users call before writing a startup variable
    ("accelerate.Accelerator()", [], {}, "import accelerate as M\nM.Accelerator()"),
    ("accelerate.PartialState()", [], {}, "import accelerate as M\nM.PartialState()"),
    ("lightning Fabric(accelerator='cuda', devices=1)", [], {},
     "import lightning as M\nfrom lightning.fabric import Fabric\nFabric(accelerator='cuda', devices=1)"),
    ("lightning Fabric(...).launch()", [], {},
     "import lightning as M\nfrom lightning.fabric import Fabric\nFabric(accelerator='cuda', devices=1).launch()"),
    ("lightning Trainer(accelerator='gpu', devices=1)", [], {},
     "import lightning as M\nM.Trainer(accelerator='gpu', devices=1, logger=False, enable_checkpointing=False)"),
    ("transformers.TrainingArguments(output_dir=...)", [], {},
     "import transformers as M\nM.TrainingArguments(output_dir='/tmp/gp-ta')"),
    ("transformers.TrainingArguments(...).device", [], {},
     "import transformers as M\nM.TrainingArguments(output_dir='/tmp/gp-ta').device"),
    ("transformers.Seq2SeqTrainingArguments(output_dir=...)", [], {},
     "import transformers as M\nM.Seq2SeqTrainingArguments(output_dir='/tmp/gp-ta')"),
    ("torch.distributed.init_process_group('gloo')", [], _DIST_ENV,
     "import torch.distributed as M\nM.init_process_group('gloo')"),
    ("torch.distributed.init_process_group('nccl')", [], _DIST_ENV,
     "import torch.distributed as M\nM.init_process_group('nccl')"),
    ("torch.distributed.init_process_group('nccl', device_id=cuda:0)", [], _DIST_ENV,
     "import torch, torch.distributed as M\nM.init_process_group('nccl', device_id=torch.device('cuda', 0))"),
    ("init_process_group('nccl') then barrier()", [], _DIST_ENV,
     "import torch.distributed as M\nM.init_process_group('nccl')\nM.barrier()"),
    ("deepspeed.init_distributed() (38327e07f6)", ["deepspeed-head"] + _DS, _DIST_ENV,
     "import deepspeed as M\nM.init_distributed()"),
    ("cupy.cuda.runtime.getDeviceCount()", [], {}, "import cupy as M\nM.cuda.runtime.getDeviceCount()"),
    ("cupy.zeros(1)", [], {}, "import cupy as M\nM.zeros(1)"),
]

HEAD = r'''
import os, sys, json, io, contextlib, time
R = {}
t0 = time.time()
_err = io.StringIO()
try:
    with contextlib.redirect_stderr(_err):
        exec(compile(__CODE__, "<case>", "exec"), globals())
    R["version"] = str(getattr(M, "__version__", "?"))
except BaseException as e:
    R["error"] = (type(e).__name__ + ": " + (str(e).splitlines() or [""])[0])[:240]
R["stderr_head"] = _err.getvalue().strip().splitlines()[:2]
R["code_seconds"] = round(time.time() - t0, 1)
import torch
R["is_initialized_after_code"] = torch.cuda.is_initialized()
'''

# After the case's code: write the method's variable(s), then allocate; `key` says whether it worked.
TAIL = r'''
__WRITE__
try:
    torch.ones(1, device="cuda")
    R["__KEY__"] = True
except BaseException as e:
    R["__KEY__"] = False
    R["alloc_error"] = (type(e).__name__ + ": " + (str(e).splitlines() or [""])[0])[:200]
print("@@RESULT " + json.dumps(R), flush=True)
'''
# method: (the writes, the result key). cvd: hide every GPU (works = frozen); alloc: an unknown
# allocator option (works = the allocator was configured before the write).
METHODS = {
    "cvd": ('os.environ["CUDA_VISIBLE_DEVICES"] = ""', "frozen"),
    "alloc": ('os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "bogus_option:1"\nos.environ.pop("PYTORCH_ALLOC_CONF", None)',
              "allocator_configured_before_write"),
}

def run_case(fw, case, method):
    """Run one case with one method ('cvd' or 'alloc') in a fresh python3; returns its result dict."""
    cid, paths, env_extra, code = case
    env = dict(os.environ)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    env.update(env_extra)
    if "MASTER_PORT" in env_extra:  # one port per concurrent process
        env["MASTER_PORT"] = str(29500 + (abs(hash((cid, method))) % 2000))
    extra = [os.path.abspath(os.path.join(fw, p)) for p in paths]
    env["PYTHONPATH"] = os.pathsep.join(extra + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    write, key = METHODS[method]
    src = HEAD.replace("__CODE__", repr(code)) + TAIL.replace("__WRITE__", write).replace("__KEY__", key)
    t0 = time.time()
    try:
        p = subprocess.run([sys.executable, "-c", src], env=env, capture_output=True, text=True, timeout=240,
                           cwd="/tmp")
        out, rc, tail = p.stdout, p.returncode, p.stderr[-600:]
    except subprocess.TimeoutExpired:
        out, rc, tail = "", "timeout", ""
    res = {"case": cid, "method": method, "paths": paths, "env": env_extra, "rc": rc,
           "seconds": round(time.time() - t0, 1)}
    for line in out.splitlines():
        if line.startswith(MARK):
            res.update(json.loads(line[len(MARK):]))
            break
    else:
        res["stderr_tail"] = tail
    return res


def grouped(results):
    """One row per case: the cvd run's facts (frozen, is_initialized_after_code, version, ...) with the
    alloc run's allocator_configured_before_write; the group tells an import from a helper call."""
    rows = {}
    for r in results:
        row = rows.setdefault(r["case"], {"group": "import-freeze" if r["case"].startswith("import ") else "helper-freeze",
                                          "case": r["case"], "paths": r["paths"], "env": r["env"]})
        keep = {k: v for k, v in r.items() if k not in ("case", "method", "paths", "env", "rc", "seconds")}
        if r["method"] == "alloc":
            keep = {k: v for k, v in keep.items() if k in ("allocator_configured_before_write", "alloc_error")}
            keep = {("alloc_run_error" if k == "alloc_error" else k): v for k, v in keep.items()}
        row.update(keep)
    return list(rows.values())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fw", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", type=int, default=12)
    ap.add_argument("--only-sources", action="store_true", help="only the cases that need a library folder from --fw")
    ap.add_argument("--match", default="", help="only the cases whose id contains this text")
    ap.add_argument("--grouped", action="store_true",
                    help="one row per case (its cvd and alloc runs merged, with a group: import-freeze for an "
                         "import, helper-freeze for a call), the shape of the committed results-frameworks-*.json")
    a = ap.parse_args()
    import torch
    smi = subprocess.run(["nvidia-smi", "--query-gpu=index,name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True, timeout=30).stdout.strip().splitlines()
    envinfo = {"python": sys.version.split()[0], "torch": torch.__version__, "cuda": torch.version.cuda,
               "nvidia_smi": smi, "kernel": os.uname().release,
               "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    for mod in ("accelerate", "lightning", "transformers", "cupy", "torch_geometric"):
        try:
            envinfo[mod] = __import__(mod).__version__
        except BaseException as e:  # recorded, not fatal
            envinfo[mod] = "missing: " + type(e).__name__
    jobs = [(c, m) for c in CASES for m in ("cvd", "alloc") if (c[1] or not a.only_sources) and a.match in c[0]]
    results = []
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        for r in ex.map(lambda j: run_case(a.fw, *j), jobs):
            results.append(r)
            keys = ("version", "error", "is_initialized_after_code", "frozen", "allocator_configured_before_write")
            print(r["case"], r["method"], {k: r.get(k) for k in keys if k in r}, flush=True)
    doc = {"environment": envinfo,
           "method": "verify/frameworks/import_probe.py (one GPU): fresh interpreter per case and method; cvd: "
                     "CUDA_VISIBLE_DEVICES=\"\" after the code, then allocate (works = frozen); alloc: "
                     "PYTORCH_CUDA_ALLOC_CONF=bogus_option:1 after the code, then allocate (works = allocator "
                     "configured before the write)",
           "cases": grouped(results) if a.grouped else results}
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
