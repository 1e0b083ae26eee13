#!/bin/bash
export MODEL_NAME="stabilityai/stable-diffusion-2-base"
export INSTANCE_DIR="./dog"
export OUTPUT_DIR="./dreambooth-dog"

colossalai run --nproc_per_node 2 train_dreambooth.py \
  --pretrained_model_name_or_path=$MODEL_NAME \
  --instance_data_dir=$INSTANCE_DIR \
  --output_dir=$OUTPUT_DIR
