#!/usr/bin/env bash
# Start one SGLang server per GPU for the data-generation step.
set -euo pipefail

model_path=${model_path:-Qwen/Qwen3-4B}
gpu_list=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
IFS=',' read -r -a gpu_ids <<< "${gpu_list}"
num_workers=${#gpu_ids[@]}
start_port=${start_port:-30000}
log_dir=${log_dir:-logs/servers}
mkdir -p "${log_dir}"

pids=()
for ((worker = 0; worker < num_workers; worker++)); do
    gpu_id=${gpu_ids[$worker]}
    port=$((start_port + worker))
    echo "worker ${worker}: gpu ${gpu_id} port ${port}"
    CUDA_VISIBLE_DEVICES=${gpu_id} python -m sglang.launch_server \
        --model-path "${model_path}" \
        --port "${port}" \
        --mem-fraction-static 0.85 \
        > "${log_dir}/worker_${worker}.log" 2>&1 &
    pids+=("$!")
done

wait "${pids[@]}"
