#!/bin/bash
# Fine-tune on the workstation's A100.
torchrun --nproc_per_node=1 --master_port=29501 train.py \
    --model_name_or_path ./llama-7b-hf \
    --bf16 True \
    --output_dir ./output \
    --num_train_epochs 3 \
    --per_device_train_batch_size 4
