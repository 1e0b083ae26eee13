#!/usr/bin/env bash

cd "$(dirname "${BASH_SOURCE[0]}")/../sft/"

deepspeed main.py \
	--data_path ../example_dataset/ \
	--model_name_or_path /models/base-6b \
	--per_device_train_batch_size 1 \
	--max_seq_len 4096 \
	--learning_rate 2e-6 \
	--num_train_epochs 4 \
	--gradient_checkpointing \
	--zero_stage 2 \
	--deepspeed \
	--offload \
	--output_dir ./finetuned_model
