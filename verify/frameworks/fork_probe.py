"""Which parent calls break CUDA in a forked child? Measured on ONE GPU.

accelerate's ``notebook_launcher(fn, num_processes=N)`` with N > 1 starts its workers with the
``fork`` start method on CUDA machines (accelerate/launchers.py: ``start_method = "spawn" if
device_type == "xpu" or is_rocm_available() else "fork"``), and a forked child cannot use CUDA
when the parent had initialised it (PyTorch: "Cannot re-initialize CUDA in forked subprocess").
For each parent call, a fresh interpreter makes the call, forks a child (multiprocessing's fork
context) that allocates a tensor on cuda, and records whether the child succeeded and what it
raised. Then, where accelerate is importable, the same through ``notebook_launcher`` itself with
two processes (both on GPU 0 here: the children only allocate).

usage: python3 verify/frameworks/fork_probe.py --out results.json
"""
import argparse
import json
import subprocess
import sys

POINTS = [
    ("nothing (import torch only)", "pass"),
    ("cuda.is_available", "torch.cuda.is_available()"),
    ("cuda.device_count", "torch.cuda.device_count()"),
    ("cuda.get_device_name", "torch.cuda.get_device_name(0)"),
    ("cuda.set_device", "torch.cuda.set_device(0)"),
    ("cuda.mem_get_info", "torch.cuda.mem_get_info()"),
    ("tensor on cuda", "_y = torch.ones(1, device='cuda')"),
    ("transformers.TrainingArguments", "import transformers; _a = transformers.TrainingArguments(output_dir='/tmp/ta-fork', report_to=[])"),
    ("transformers.TrainingArguments(...).device", "import transformers; _a = transformers.TrainingArguments(output_dir='/tmp/ta-fork', report_to=[]); _a.device"),
    ("transformers.Seq2SeqTrainingArguments", "import transformers; _a = transformers.Seq2SeqTrainingArguments(output_dir='/tmp/ta-fork', report_to=[])"),
    ("accelerate.Accelerator", "import accelerate; _acc = accelerate.Accelerator()"),
]

FORK = r'''
import json, multiprocessing as mp, torch
__CALL__
R = {"parent_initialized": torch.cuda.is_initialized()}
def child(q):
    try:
        torch.ones(1, device="cuda")
        q.put("ok")
    except Exception as e:
        q.put(type(e).__name__ + ": " + str(e)[:300])
ctx = mp.get_context("fork")
q = ctx.Queue()
p = ctx.Process(target=child, args=(q,))
p.start(); p.join(120)
R["child"] = q.get(timeout=5) if p.exitcode == 0 else "exit %s" % p.exitcode
print("@@RESULT " + json.dumps(R), flush=True)
'''

LAUNCHER = r'''
import json, torch
__CALL__
R = {"parent_initialized": torch.cuda.is_initialized()}
from accelerate import notebook_launcher
def work():
    torch.ones(1, device="cuda")
try:
    notebook_launcher(work, num_processes=2)
    R["launcher"] = "ok"
except Exception as e:
    R["launcher"] = type(e).__name__ + ": " + str(e)[:400]
print("@@RESULT " + json.dumps(R), flush=True)
'''


def run(src, timeout=300):
    p = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=timeout)
    for line in p.stdout.splitlines():
        if line.startswith("@@RESULT "):
            return json.loads(line[len("@@RESULT "):])
    return {"rc": p.returncode, "stderr": p.stderr[-600:]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--launcher", action="store_true", help="also through accelerate.notebook_launcher")
    a = ap.parse_args()
    import torch
    env = {"python": sys.version.split()[0], "torch": torch.__version__}
    for mod in ("transformers", "accelerate"):
        try:
            env[mod] = __import__(mod).__version__
        except Exception as e:  # not installed: the points that need it record their error
            env[mod] = "missing: %s" % e
    cases = []
    for name, call in POINTS:
        res = {"case": name, "fork": run(FORK.replace("__CALL__", call))}
        if a.launcher:
            res["notebook_launcher"] = run(LAUNCHER.replace("__CALL__", call))
        cases.append(res)
        print(json.dumps(res), flush=True)
    with open(a.out, "w") as f:
        json.dump({"env": env, "cases": cases}, f, indent=1)


if __name__ == "__main__":
    main()
