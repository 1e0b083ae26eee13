#!/bin/bash
# Supervised fine-tuning of a 7B model with LoRA on the second half of an 8-GPU server.
set -e

export CUDA_VISIBLE_DEVICES=4,5,6,7
echo "using GPUs $CUDA_VISIBLE_DEVICES"

deepspeed --num_gpus 4 src/train_sft.py \
    --deepspeed configs/ds_zero2.json \
    --model_name_or_path models/llama-7b \
    --dataset train_mix \
    --finetuning_type lora \
    --output_dir outputs/sft-lora \
    --per_device_train_batch_size 4 \
    --num_train_epochs 2 \
    --fp16
