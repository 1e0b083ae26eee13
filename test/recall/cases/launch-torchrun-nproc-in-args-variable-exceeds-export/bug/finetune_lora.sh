#!/bin/bash
export CUDA_VISIBLE_DEVICES=0,1

GPUS_PER_NODE=8
NNODES=1
MASTER_PORT=6001
MODEL="openbmb/MiniCPM-Llama3-V-2_5"
DATA="data/train.json"

LAUNCH_ARGS="--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES --master_port $MASTER_PORT"

torchrun $LAUNCH_ARGS finetune.py \
    --model_name_or_path $MODEL \
    --data_path $DATA \
    --output_dir output/lora \
    --per_device_train_batch_size 2 \
    --fp16 true \
    --deepspeed ds_config_zero2.json
