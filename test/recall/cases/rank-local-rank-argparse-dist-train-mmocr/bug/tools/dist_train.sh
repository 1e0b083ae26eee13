#!/usr/bin/env bash
# Multi-GPU training on this machine: tools/dist_train.sh <config> <num_gpus> [train.py options]
set -e
cfg_file=$1
num_gpus=$2
shift 2

export PYTHONPATH="$(dirname "$0")/..:${PYTHONPATH}"
python -m torch.distributed.launch --nproc_per_node="$num_gpus" --master_port="${PORT:-29500}" \
    "$(dirname "$0")/train.py" "$cfg_file" --launcher pytorch "$@"
