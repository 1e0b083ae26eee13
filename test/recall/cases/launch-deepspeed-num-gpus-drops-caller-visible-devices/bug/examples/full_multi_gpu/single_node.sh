#!/bin/bash

deepspeed --num_gpus 4 ../../src/train.py \
    --deepspeed ../deepspeed/ds_z3_config.json \
    --model_name_or_path meta-llama/Llama-2-7b-hf \
    --dataset_path ../../data/alpaca_gpt4_en.json \
    --output_dir ../../saves/llama2-7b/full/sft \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 2 \
    --learning_rate 5e-5 \
    --num_train_epochs 3.0 \
    --logging_steps 10 \
    --fp16
