#!/usr/bin/env bash
set -euo pipefail
set -x

if [ "$#" -ne 2 ]; then
    echo "usage: bash run_fast.sh <weights_dir> <frame_num>" >&2
    exit 2
fi

WEIGHT_DIR=$1
FRAME=$2
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NPROC_PER_NODE=${NPROC_PER_NODE:-8}

torchrun --nproc_per_node="${NPROC_PER_NODE}" generate_fast.py \
    --task i2v-A14B \
    --ckpt_dir "${WEIGHT_DIR}" \
    --image examples/lake/image.jpg \
    --action_path examples/lake \
    --ulysses_size "${NPROC_PER_NODE}" \
    --frame_num "${FRAME}" \
    --prompt "a quiet lake under snowy mountains"
