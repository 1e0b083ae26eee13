#!/bin/bash
export CUDA_VISIBLE_DEVICES=0

# train, then score the test split with the checkpoint saved by the training run
for mode in train test; do
  python main.py --mode $mode --dataset MSL --data_path dataset/MSL \
    --input_c 55 --output_c 55 --win_size 100 --batch_size 256 --anormly_ratio 1
done
