"""What `nvidia-smi dmon --gpm-metrics` (SM activity, client/src/gpu/activity.ts) costs in CPU by its
sampling period, on a real driver: the GPU view's exact dmon arguments at `-d 1`, `-d 2` and `-d 5`,
run at the same time for ``--seconds`` with a matmul loop on GPU 0; each child's own CPU (user +
system) from ``os.wait4``. Also the view's whole nvidia-smi set with the Processes tab open, as
client/src/gpu/ runs it: the GPU stream (`-lms 1000`), the process stream (`-lms 5000`), dmon at
the period under test and one `pmon -c 1 -s u -i 0` every 10 s.

usage: python3 verify/gpm/dmon_period.py --out FILE [--seconds 60]
"""
import argparse
import json
import os
import subprocess
import sys
import time

GPU_FIELDS = ("index,uuid,name,pci.bus_id,driver_version,memory.total,memory.used,memory.free,utilization.gpu,"
              "utilization.memory,temperature.gpu,power.draw,power.limit,fan.speed,compute_mode,mig.mode.current,"
              "persistence_mode,clocks.sm,clocks.max.sm,pstate")
APPS = "timestamp,gpu_uuid,gpu_bus_id,pid,process_name,used_memory"
DMON = ["nvidia-smi", "dmon", "-s", "u", "--gpm-metrics", "2,3,5", "-d"]
BUSY = ("import torch, time; a = torch.randn(8192, 8192, device='cuda'); print('ready', flush=True)\n"
        "t = time.time()\nwhile time.time() - t < 900:\n    b = a @ a\n    torch.cuda.synchronize()\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=60)
    a = ap.parse_args()
    busy = subprocess.Popen([sys.executable, "-c", BUSY], stdout=subprocess.PIPE, text=True)
    busy.stdout.readline()
    modes = {f"dmon-d{d}": DMON + [str(d)] for d in (1, 2, 5)}
    modes["gpu-lms1000"] = ["nvidia-smi", f"--query-gpu={GPU_FIELDS}", "--format=csv,noheader,nounits", "-lms", "1000"]
    modes["apps-lms5000"] = ["nvidia-smi", f"--query-compute-apps={APPS}", "--format=csv,nounits", "-lms", "5000"]
    procs = {n: (subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), time.time())
             for n, argv in modes.items()}
    pmon_cpu, pmon_calls, t0 = 0.0, 0, time.time()
    while time.time() - t0 < a.seconds:
        p = subprocess.Popen(["nvidia-smi", "pmon", "-c", "1", "-s", "u", "-i", "0"], stdout=subprocess.DEVNULL)
        _, _, ru = os.wait4(p.pid, 0)
        pmon_cpu += ru.ru_utime + ru.ru_stime
        pmon_calls += 1
        time.sleep(max(0.0, 10 - (time.time() - t0) % 10))
    out = {"driver": subprocess.run(["nvidia-smi", "--query-gpu=driver_version,name", "--format=csv,noheader"],
                                    capture_output=True, text=True).stdout.strip(), "seconds": a.seconds, "modes": {}}
    for n, (p, start) in procs.items():
        p.terminate()
        _, _, ru = os.wait4(p.pid, 0)
        wall = time.time() - start
        out["modes"][n] = {"argv": modes[n], "cpu_ms_per_minute": round(1000 * (ru.ru_utime + ru.ru_stime) * 60 / wall, 1)}
    wall = time.time() - t0
    out["modes"]["pmon-c1-every-10s"] = {"calls": pmon_calls, "cpu_ms_per_minute": round(1000 * pmon_cpu * 60 / wall, 1)}
    busy.kill()
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
