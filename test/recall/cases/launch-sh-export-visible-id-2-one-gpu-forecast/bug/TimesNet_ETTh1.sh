#!/bin/bash
export CUDA_VISIBLE_DEVICES=2

model_name=TimesNet

for pred_len in 96 336; do
  python -u run.py \
    --task_name long_term_forecast \
    --is_training 1 \
    --data ETTh1 \
    --model $model_name \
    --seq_len 96 \
    --pred_len $pred_len \
    --itr 1
done
