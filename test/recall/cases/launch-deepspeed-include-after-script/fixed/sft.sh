#!/bin/bash
# Only GPUs 0 and 1 of this 6-GPU server are ours.
deepspeed --include="localhost:0,1" train_lora.py \
    --output_dir ./lora_checkpoint \
    --per_device_train_batch_size 1 \
    --fp16 \
    --deepspeed ds_zero3.json
