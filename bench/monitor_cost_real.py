"""GPU view cost on a real GPU machine (issue 8, part 4), where Node may be absent: the same two
process models as bench/monitor-cost.ts, driving the real nvidia-smi at a 1 s refresh, measuring
CPU time per minute of this process plus its nvidia-smi children (getrusage).
  stream: one `nvidia-smi --query-gpu=<fields> --format=csv,noheader,nounits -lms 1000`, compute
          apps every 5th tick;  spawn: one `--query-gpu` process per tick, compute apps every 5th.
usage: python3 bench/monitor_cost_real.py SECONDS  -> one JSON line per mode
"""
import json
import resource
import subprocess
import sys
import time

FIELDS = ("index,uuid,name,pci.bus_id,driver_version,memory.total,memory.used,memory.free,utilization.gpu,"
          "utilization.memory,temperature.gpu,power.draw,power.limit,fan.speed,compute_mode,mig.mode.current,"
          "persistence_mode,clocks.sm,clocks.max.sm,pstate")
GPU = ["nvidia-smi", f"--query-gpu={FIELDS}", "--format=csv,noheader,nounits"]
APPS = ["nvidia-smi", "--query-compute-apps=gpu_uuid,gpu_bus_id,pid,process_name,used_memory", "--format=csv,noheader,nounits"]


def cpu_ms():
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime) * 1000


def run(mode, seconds):
    start, t0, ticks = cpu_ms(), time.time(), 0
    if mode == "stream":
        p = subprocess.Popen(GPU + ["-lms", "1000"], stdout=subprocess.PIPE, text=True)
        n_gpus = len(subprocess.run(GPU, capture_output=True, text=True).stdout.strip().splitlines())
        lines = 0
        while time.time() - t0 < seconds:
            if not p.stdout.readline():
                break
            lines += 1
            if lines % n_gpus == 0:
                ticks += 1
                if ticks % 5 == 1:
                    subprocess.run(APPS, capture_output=True)
        p.terminate()
        p.wait()
    else:
        i = 0
        while time.time() - t0 < seconds:
            ts = time.time()
            subprocess.run(GPU, capture_output=True)
            ticks += 1
            if i % 5 == 0:
                subprocess.run(APPS, capture_output=True)
            i += 1
            time.sleep(max(0, 1 - (time.time() - ts)))
    wall = time.time() - t0
    used = cpu_ms() - start
    return {"mode": mode, "seconds": round(wall, 2), "ticks": ticks, "cpu_ms": round(used), "cpu_ms_per_min": round(used / wall * 60)}


if __name__ == "__main__":
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 60
    for m in ("stream", "spawn"):
        print(json.dumps(run(m, secs)), flush=True)
