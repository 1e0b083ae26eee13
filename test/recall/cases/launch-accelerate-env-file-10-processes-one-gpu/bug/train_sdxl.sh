#!/bin/bash
# Load the shipped defaults, then the user's overrides when they exist.
source sdxl-env.sh.example
[ -f "sdxl-env.sh" ] && source sdxl-env.sh

accelerate launch ${ACCELERATE_EXTRA_ARGS} --mixed_precision="${MIXED_PRECISION}" \
    --num_processes="${TRAINING_NUM_PROCESSES}" --num_machines="${TRAINING_NUM_MACHINES}" \
    train_sdxl.py \
    --pretrained_model_name_or_path="${MODEL_NAME}" \
    --instance_data_dir="${INSTANCE_DIR}" \
    --resolution="${RESOLUTION}" \
    --train_batch_size="${TRAIN_BATCH_SIZE}" \
    --learning_rate="${LEARNING_RATE}" \
    --output_dir="${OUTPUT_DIR}"
