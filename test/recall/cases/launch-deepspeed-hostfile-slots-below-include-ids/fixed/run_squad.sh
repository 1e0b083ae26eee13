#!/bin/bash
# Fine-tune BERT on SQuAD with DeepSpeed on the two workers (each has 4 GPUs; 0 and 1 are taken by others).
MODEL_DIR=checkpoints/bert-large-uncased
OUT_DIR=outputs/squad

deepspeed --hostfile hostfile --include=work1:2,3 nvidia_run_squad_deepspeed.py \
    --bert_model bert-large-uncased \
    --do_train \
    --train_file data/train-v1.1.json \
    --predict_file data/dev-v1.1.json \
    --train_batch_size 24 \
    --learning_rate 3e-5 \
    --num_train_epochs 2.0 \
    --max_seq_length 384 \
    --output_dir $OUT_DIR \
    --model_file $MODEL_DIR/pytorch_model.bin \
    --deepspeed \
    --deepspeed_config deepspeed_bsz24_config.json
