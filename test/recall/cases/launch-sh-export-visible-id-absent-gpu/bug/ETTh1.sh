#!/bin/bash
export CUDA_VISIBLE_DEVICES=1

for pred_len in 96 192 336 720; do
  python -u run.py --model Autoformer --data ETTh1 --gpu 0 --pred_len $pred_len
done
