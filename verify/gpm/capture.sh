#!/bin/bash
# Captures `nvidia-smi dmon --gpm-metrics` on a real GPU (issue 19, part 2) under three loads, and the
# CPU cost of one streaming dmon process. One device call; 1 GPU is enough.
#   idle   : nothing runs on the GPU
#   full   : bf16 matmuls on every SM (tensor cores busy)
#   spin   : torch.cuda._sleep: one thread block spinning, so GPU-Util (time any kernel ran) is ~100 %
#            while SM activity (share of SMs busy) is ~1/SM count: "busy but idle"
# GPM metric ids (NVML nvmlGpmMetricId_t): 1 graphics util, 2 SM util, 3 SM occupancy, 5 any tensor,
# 10 DRAM bandwidth, 13 FP16.
# usage (on the GPU machine): OUT=dir bash verify/gpm/capture.sh
set -u
OUT=${OUT:-/tmp/gpm-out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/version.txt" 2>&1
nvidia-smi dmon -h > "$OUT/dmon-help.txt" 2>&1
IDS=1,2,3,5,10,13
load() { # $1 = full|spin|idle, $2 = seconds
  [ "$1" = idle ] && { sleep "$2"; return; }
  python3 - "$1" "$2" <<'PY'
import sys, time, torch
mode, secs = sys.argv[1], float(sys.argv[2])
t0 = time.time()
if mode == "full":
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16); b = torch.randn_like(a)
    while time.time() - t0 < secs:
        for _ in range(20): c = a @ b
        torch.cuda.synchronize()
else:
    while time.time() - t0 < secs:
        torch.cuda._sleep(100_000_000); torch.cuda.synchronize()
PY
}
for mode in idle full spin; do
  load "$mode" 14 &
  L=$!
  sleep 3
  # plain dmon (u = sm/mem util) and GPM metrics in one stream, 8 samples at 1 s
  timeout 20 nvidia-smi dmon -s u --gpm-metrics $IDS -d 1 -c 8 > "$OUT/dmon-$mode.txt" 2> "$OUT/dmon-$mode.err"
  echo "rc $?" >> "$OUT/dmon-$mode.err"
  timeout 10 nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 1000 > "$OUT/util-$mode.txt" 2>&1 &
  U=$!; sleep 4; kill $U 2>/dev/null
  wait $L
done
# the process view while something runs (pid column), also with gpm
load full 8 & L=$!; sleep 3
timeout 10 nvidia-smi pmon -c 3 > "$OUT/pmon-full.txt" 2>&1
wait $L
# CPU cost of one streaming dmon at 1 s for 60 s (idle GPU): utime+stime of the dmon process from /proc
nvidia-smi dmon -s u --gpm-metrics $IDS -d 1 > "$OUT/dmon-60s.txt" 2>&1 & D=$!
sleep 60
read -r ut st < <(awk '{print $14, $15}' /proc/$D/stat)
CLK=$(getconf CLK_TCK)
kill $D; wait $D 2>/dev/null
echo "{\"seconds\": 60, \"utime_ticks\": $ut, \"stime_ticks\": $st, \"clk_tck\": $CLK, \"cpu_ms_per_min\": $(( (ut + st) * 1000 / CLK ))}" > "$OUT/dmon-cost.json"
# the same for the plain query stream the GPU view uses today, for a ratio in the same run
nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader,nounits -lms 1000 > /dev/null 2>&1 & Q=$!
sleep 60
read -r ut st < <(awk '{print $14, $15}' /proc/$Q/stat)
kill $Q; wait $Q 2>/dev/null
echo "{\"seconds\": 60, \"utime_ticks\": $ut, \"stime_ticks\": $st, \"clk_tck\": $CLK, \"cpu_ms_per_min\": $(( (ut + st) * 1000 / CLK ))}" > "$OUT/query-cost.json"
ls -la "$OUT"; cat "$OUT/dmon-full.txt" "$OUT/dmon-spin.txt" "$OUT/dmon-cost.json" "$OUT/query-cost.json"
