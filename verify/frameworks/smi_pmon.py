"""What per-process SM % from ``nvidia-smi pmon`` costs in CPU on a real driver (issue 45 item 2).

``nvidia-smi pmon`` is the only nvidia-smi mode that reports a process's SM share (``nvidia-smi
pmon -h``: "-s u: Utilization (SM, Memory, Encoder, Decoder, JPEG, OFA)"); its streaming form costs
3.8 s of CPU per minute at ``-d 1`` (BENCHMARKS.md, nvidia-smi's looping modes). This probe measures
the forms the Processes tab could use instead, with a busy process (a matmul loop, so SM % is not 0)
and an idle one holding memory on GPU 0:

- one-shot ``pmon -c 1 -s u`` (and ``-s um``): CPU (user + system, from ``os.wait4``) and wall per call;
- the stream at ``-d 5`` and ``-d 10`` for ``--seconds``: CPU per minute.

Outputs go to ``--out-dir`` (``pmon-*.txt``, the first 256 KiB each) and ``smi-pmon.json``.

usage: python3 verify/frameworks/smi_pmon.py --out-dir DIR [--seconds 60] [--calls 10]
"""
import argparse
import json
import os
import subprocess
import sys
import time

BUSY = ("import torch, time; a = torch.randn(8192, 8192, device='cuda'); print('ready', flush=True)\n"
        "t = time.time()\nwhile time.time() - t < 900:\n    b = a @ a\n    torch.cuda.synchronize()\n")
IDLE = "import torch, time; x = torch.ones(2**28, device='cuda'); print('ready', flush=True); time.sleep(900)"
STREAMS = {"d5": ["nvidia-smi", "pmon", "-d", "5", "-s", "u"], "d10": ["nvidia-smi", "pmon", "-d", "10", "-s", "u"],
           "d1": ["nvidia-smi", "pmon", "-d", "1", "-s", "u"]}


def timed(argv, out_path):
    """Runs argv to completion; returns (cpu_s, wall_s, rc)."""
    with open(out_path, "wb") as f:
        t0 = time.time()
        p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
        return ru.ru_utime + ru.ru_stime, time.time() - t0, os.waitstatus_to_exitcode(status)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--calls", type=int, default=10)
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    helpers = []
    for code in (BUSY, IDLE):
        h = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        h.stdout.readline()
        helpers.append(h)
    time.sleep(3)
    result = {"driver": subprocess.run(["nvidia-smi", "--query-gpu=driver_version,name", "--format=csv,noheader"],
                                       capture_output=True, text=True).stdout.strip(),
              "kernel": os.uname().release, "busy_pid": helpers[0].pid, "idle_pid": helpers[1].pid,
              "one_shot": {}, "streams": {}}
    for sel in ("u", "um"):
        runs = [timed(["nvidia-smi", "pmon", "-c", "1", "-s", sel], os.path.join(a.out_dir, f"pmon-c1-{sel}-{i}.txt"))
                for i in range(a.calls)]
        cpus = sorted(r[0] for r in runs)
        walls = sorted(r[1] for r in runs)
        result["one_shot"][sel] = {"cpu_ms_median": 1000 * cpus[len(cpus) // 2], "wall_ms_median": 1000 * walls[len(walls) // 2],
                                   "cpu_ms_each": [round(1000 * c, 1) for c in cpus], "rcs": sorted({r[2] for r in runs})}
    files, procs = {}, {}
    for name, argv in STREAMS.items():
        files[name] = open(os.path.join(a.out_dir, f"pmon-stream-{name}.txt"), "w+b")
        procs[name] = (subprocess.Popen(argv, stdout=files[name], stderr=subprocess.STDOUT), time.time())
    time.sleep(a.seconds)
    for name, (p, t0) in procs.items():
        p.terminate()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.time() - t0
        cpu = ru.ru_utime + ru.ru_stime
        f = files[name]
        f.seek(0)
        lines = f.read().decode(errors="replace").splitlines()
        result["streams"][name] = {"argv": STREAMS[name], "cpu_s": cpu, "wall_s": wall,
                                   "cpu_ms_per_minute": 1000 * cpu * 60 / wall, "lines": len(lines)}
        f.close()
    for h in helpers:
        h.kill()
    with open(os.path.join(a.out_dir, "smi-pmon.json"), "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
