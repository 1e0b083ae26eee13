#!/bin/bash
# Fine-tune the anomaly-detection adapter on the MVTec training split.

mkdir -p ../ckpt/train_mvtec ../rest/train_mvtec

deepspeed --include localhost:5,6 --master_port 28400 train_mvtec.py \
    --model openllama_peft \
    --stage 1 \
    --imagebind_ckpt_path ../pretrained_ckpt/imagebind_ckpt/imagebind_huge.pth \
    --vicuna_ckpt_path ../pretrained_ckpt/vicuna_ckpt/7b_v0/ \
    --delta_ckpt_path ../pretrained_ckpt/pandagpt_ckpt/7b/pytorch_model.pt \
    --max_tgt_len 1024 \
    --data_path ../data/pandagpt4_visual_instruction_data.json \
    --image_root_path ../data/images/ \
    --save_path ../ckpt/train_mvtec/ \
    --log_path ../rest/train_mvtec/
