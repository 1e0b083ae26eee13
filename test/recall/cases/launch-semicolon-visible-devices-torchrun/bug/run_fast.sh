#!/usr/bin/env bash
set -x

WEIGHT_DIR=$1
FRAME=$2

CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7; torchrun --nproc_per_node=8 generate_fast.py \
    --task i2v-A14B \
    --ckpt_dir "${WEIGHT_DIR}" \
    --image examples/lake/image.jpg \
    --action_path examples/lake \
    --ulysses_size 8 \
    --frame_num "${FRAME}" \
    --prompt "a quiet lake under snowy mountains"
