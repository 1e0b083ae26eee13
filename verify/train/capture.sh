#!/bin/bash
# Captures nvidia-smi while a real training run starts, trains and ends (issue 45: the History
# panel's replay, test/fixtures/nvidia-smi/h200-train/). One device call, 1 GPU:
#   - the memory fields once, with memory.reserved (what the driver and firmware hold: total - used - free);
#   - from 20 s before the run to 20 s after it, every 1000 ms: the GPU query stream (with the
#     sample's timestamp), dmon with the GPM metrics GPU Pilot reads, and the looping process query;
#   - the run's own output (train.py: each line with its offset from the run's start).
# usage (on the GPU machine): OUT=dir bash verify/train/capture.sh
set -u
OUT=${OUT:-/tmp/train-out}; mkdir -p "$OUT"
here=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.reserved,memory.used,memory.free --format=csv > "$OUT/memory.csv" 2>&1
nvidia-smi -q -d MEMORY > "$OUT/memory-q.txt" 2>&1
date +%s%3N > "$OUT/t0.txt"
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used,memory.free,memory.reserved,temperature.gpu,power.draw,clocks.sm --format=csv,noheader,nounits -lms 1000 > "$OUT/loop.csv" 2> "$OUT/loop.err" & Q=$!
nvidia-smi dmon -s u --gpm-metrics 1,2,3,5,10,13 -d 1 > "$OUT/dmon.txt" 2> "$OUT/dmon.err" & D=$!
nvidia-smi --query-compute-apps=timestamp,pid,process_name,used_memory --format=csv,nounits -lms 1000 > "$OUT/apps.csv" 2> "$OUT/apps.err" & A=$!
sleep 20
PYTHONUNBUFFERED=1 python3 "$here/train.py" > "$OUT/train.log" 2>&1
echo "rc $?" >> "$OUT/train.log"
sleep 20
kill $Q $D $A; wait $Q $D $A 2>/dev/null
wc -l "$OUT"/*; cat "$OUT/memory.csv" "$OUT/train.log"; head -3 "$OUT/loop.csv"; tail -3 "$OUT/loop.csv"
