#!/usr/bin/env bash
# Start one SGLang server per GPU for the data-generation step.
set -euo pipefail

model_path=${model_path:-Qwen/Qwen3-4B}
num_workers=8
start_port=${start_port:-30000}
log_dir=${log_dir:-logs/servers}
mkdir -p "${log_dir}"

pids=()
for ((gpu_id = 0; gpu_id < num_workers; gpu_id++)); do
    port=$((start_port + gpu_id))
    echo "worker ${gpu_id}: gpu ${gpu_id} port ${port}"
    CUDA_VISIBLE_DEVICES=${gpu_id} python -m sglang.launch_server \
        --model-path "${model_path}" \
        --port "${port}" \
        --mem-fraction-static 0.85 \
        > "${log_dir}/worker_${gpu_id}.log" 2>&1 &
    pids+=("$!")
done

wait "${pids[@]}"
