"""Can threads of one process each choose their GPU with CUDA_VISIBLE_DEVICES? Measured on ONE GPU.

A pattern users write (ultralytics/ultralytics#3300: three threads predicting with device=0, 1
and 2, which Ultralytics applies by writing CUDA_VISIBLE_DEVICES) is a thread per GPU, each thread
setting CUDA_VISIBLE_DEVICES to its own id before it uses CUDA. ``os.environ`` is the process's
environment, shared by its threads, and CUDA reads the variable once, when it initialises. Each case
runs in a fresh interpreter; thread k writes CUDA_VISIBLE_DEVICES=str(k) and then uses CUDA.
On a one-GPU machine id 1 does not exist, so a write of "1" that took effect would leave that
thread (or its process) no GPU; one that did not take effect leaves GPU 0 usable.

- ``sequential``: thread 0 writes "0" and allocates on cuda, then thread 1 writes "1" and allocates.
- ``both_write_first``: both threads write (0 then 1), then both allocate (a barrier between).

usage: python3 verify/frameworks/thread_probe.py --out results.json
"""
import argparse
import json
import subprocess
import sys

CASES = {
    "sequential": r'''
import json, os, threading, torch
R = {}
def work(k):
    os.environ["CUDA_VISIBLE_DEVICES"] = str(k)
    try:
        x = torch.ones(1, device="cuda")
        R[k] = {"env": os.environ["CUDA_VISIBLE_DEVICES"], "device_count": torch.cuda.device_count(),
                "uuid": str(torch.cuda.get_device_properties(x.device).uuid)}
    except Exception as e:
        R[k] = {"env": os.environ["CUDA_VISIBLE_DEVICES"], "error": type(e).__name__ + ": " + str(e)[:200]}
for k in (0, 1):
    t = threading.Thread(target=work, args=(k,)); t.start(); t.join()
print("@@RESULT " + json.dumps(R), flush=True)
''',
    "both_write_first": r'''
import json, os, threading, torch
R = {}
written = threading.Barrier(2)
order = threading.Lock()
def work(k):
    with order:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(k)
    written.wait()
    try:
        x = torch.ones(1, device="cuda")
        R[k] = {"env": os.environ["CUDA_VISIBLE_DEVICES"], "device_count": torch.cuda.device_count(),
                "uuid": str(torch.cuda.get_device_properties(x.device).uuid)}
    except Exception as e:
        R[k] = {"env": os.environ["CUDA_VISIBLE_DEVICES"], "error": type(e).__name__ + ": " + str(e)[:200]}
t0 = threading.Thread(target=work, args=(0,)); t0.start()
while "CUDA_VISIBLE_DEVICES" not in os.environ: pass
t1 = threading.Thread(target=work, args=(1,)); t1.start()
t0.join(); t1.join()
print("@@RESULT " + json.dumps(R), flush=True)
''',
}


def run(src, timeout=300):
    env = {k: v for k, v in __import__("os").environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    p = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=timeout, env=env)
    for line in p.stdout.splitlines():
        if line.startswith("@@RESULT "):
            return json.loads(line[len("@@RESULT "):])
    return {"rc": p.returncode, "stderr": p.stderr[-600:]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import torch
    env = {"python": sys.version.split()[0], "torch": torch.__version__, "gpus": torch.cuda.device_count()}
    cases = []
    for name, src in CASES.items():
        res = {"case": name, "threads": run(src)}
        cases.append(res)
        print(json.dumps(res), flush=True)
    with open(a.out, "w") as f:
        json.dump({"env": env, "cases": cases}, f, indent=1)


if __name__ == "__main__":
    main()
