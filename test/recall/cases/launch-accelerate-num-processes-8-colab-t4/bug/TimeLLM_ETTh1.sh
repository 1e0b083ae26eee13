#!/bin/bash
# Long-term forecasting on ETTh1.
model_name=TimeLLM
train_epochs=100
learning_rate=0.01
llama_layers=32

master_port=29517
num_process=8
batch_size=24
d_model=32
d_ff=128

comment='TimeLLM-ETTh1'

accelerate launch --multi_gpu --mixed_precision bf16 --num_processes $num_process --main_process_port $master_port run_main.py \
  --model $model_name \
  --seq_len 512 \
  --pred_len 96 \
  --enc_in 7 \
  --d_model $d_model \
  --d_ff $d_ff \
  --llm_layers $llama_layers \
  --batch_size $batch_size \
  --learning_rate $learning_rate \
  --train_epochs $train_epochs \
  --model_comment $comment
