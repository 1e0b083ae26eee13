#!/bin/bash
# LoRA fine-tuning of chatglm3-6b on the advertising data set, several GPUs.
set -e

DATA_DIR=data/AdvertiseGen/
MODEL=THUDM/chatglm3-6b

OMP_NUM_THREADS=1 torchrun --standalone --nnodes=1 --nproc_per_node=2 finetune_hf.py \
    $DATA_DIR $MODEL configs/lora.yaml \
    --deepspeed ds_zero_2.json
