#!/bin/bash
# usage: bash run_360.sh <gpu_id> <scene_dir> <output_dir>
export CUDA_VISIBLE_DEVICES=$1
scene=$2
out=$3

python train.py --source_path "$scene" --model_path "$out" \
  --resolution 4 --n_views 24 --iterations 30000 --num_fields 2
