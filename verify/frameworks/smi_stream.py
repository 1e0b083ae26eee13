"""nvidia-smi's looping modes on a real driver, and what each costs in CPU (issue 47 item 4).

A helper process holds 1 GiB on GPU 0 (so the compute-apps list has a row), then every mode runs
for ``--seconds`` at once, each its own child; ``os.wait4`` gives each child's own CPU time (user +
system, s). Output goes to ``--out-dir/stream-<mode>.txt`` (first 256 KiB), the table to
``--out-dir/smi-stream.json``. One-shot compute-apps queries (the GPU view's old way, one process
per tick) are timed the same way, 20 in a row.

The modes are the GPU view's two streams with the exact arguments it passes (client/src/gpu/stream.ts
and appsStream.ts; fields from common/src/nvidiaSmi/parse.ts), their ``-l 1`` variants, and
``pmon``/``dmon`` (documented in ``nvidia-smi -h`` as the process and device monitors).

usage: python3 verify/frameworks/smi_stream.py --out-dir DIR [--seconds 30]
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
APPS_FIELDS = "gpu_uuid,gpu_bus_id,pid,process_name,used_memory"
MODES = {
    "gpu-lms1000": ["nvidia-smi", f"--query-gpu={GPU_FIELDS}", "--format=csv,noheader,nounits", "-lms", "1000"],
    "apps-lms1000": ["nvidia-smi", f"--query-compute-apps={APPS_FIELDS}", "--format=csv,nounits", "-lms", "1000"],
    "apps-lms5000": ["nvidia-smi", f"--query-compute-apps={APPS_FIELDS}", "--format=csv,nounits", "-lms", "5000"],
    "apps-l1": ["nvidia-smi", f"--query-compute-apps={APPS_FIELDS}", "--format=csv,noheader,nounits", "-l", "1"],
    # the process stream's arguments since it delimits samples by the rows' timestamp (appsStream.ts)
    "apps-ts-lms5000": ["nvidia-smi", f"--query-compute-apps=timestamp,{APPS_FIELDS}", "--format=csv,nounits", "-lms", "5000"],
    "pmon-d1": ["nvidia-smi", "pmon", "-d", "1", "-s", "um"],
    "dmon-d1": ["nvidia-smi", "dmon", "-d", "1", "-s", "pucm"],
}
HOLDER = "import torch, time; x = torch.ones(2**28, device='cuda'); print('ready', flush=True); time.sleep(600)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--seconds", type=float, default=30)
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], stdout=subprocess.PIPE, text=True)
    holder.stdout.readline()
    time.sleep(2)
    result = {"driver": subprocess.run(["nvidia-smi", "--query-gpu=driver_version,name", "--format=csv,noheader"],
                                       capture_output=True, text=True).stdout.strip(),
              "kernel": os.uname().release, "seconds": a.seconds, "holder_pid": holder.pid, "modes": {}}
    files, procs = {}, {}
    for name, argv in MODES.items():
        files[name] = open(os.path.join(a.out_dir, f"stream-{name}.txt"), "w+b")
        procs[name] = (subprocess.Popen(argv, stdout=files[name], stderr=subprocess.STDOUT), time.time())
    time.sleep(a.seconds)
    for name, (p, t0) in procs.items():
        p.terminate()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.time() - t0
        f = files[name]
        f.flush()
        size = f.tell()
        f.seek(0)
        text = f.read(256 * 1024).decode("utf-8", "replace")
        f.close()
        if size > 256 * 1024:
            with open(os.path.join(a.out_dir, f"stream-{name}.txt"), "r+b") as g:
                g.truncate(256 * 1024)
        lines = [ln for ln in text.splitlines() if ln.strip()]
        cpu = ru.ru_utime + ru.ru_stime
        result["modes"][name] = {"argv": MODES[name], "wall_s": round(wall, 1), "cpu_s": round(cpu, 3),
                                 "cpu_ms_per_minute": round(cpu / wall * 60000), "lines": len(lines),
                                 "holder_rows": sum(str(holder.pid) in ln for ln in lines),
                                 "first_lines": lines[:4], "exit_status": status}
    # one-shot queries, one process each (what a poller without -lms pays per tick)
    t_cpu = 0.0
    n = 20
    t0 = time.time()
    for _ in range(n):
        p = subprocess.Popen(["nvidia-smi", f"--query-compute-apps={APPS_FIELDS}", "--format=csv,noheader,nounits"],
                             stdout=subprocess.DEVNULL)
        _, _, ru = os.wait4(p.pid, 0)
        t_cpu += ru.ru_utime + ru.ru_stime
    result["one_shot_apps"] = {"runs": n, "cpu_ms_each": round(t_cpu / n * 1000, 1),
                               "wall_ms_each": round((time.time() - t0) / n * 1000, 1)}
    holder.kill()
    with open(os.path.join(a.out_dir, "smi-stream.json"), "w") as f:
        json.dump(result, f, indent=1)
    for k, v in result["modes"].items():
        print(k, v["cpu_ms_per_minute"], "ms/min", v["lines"], "lines", v["holder_rows"], "holder rows")
    print("one-shot", result["one_shot_apps"])


if __name__ == "__main__":
    main()
