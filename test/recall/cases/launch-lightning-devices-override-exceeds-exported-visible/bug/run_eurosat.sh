#!/bin/bash

export CUDA_VISIBLE_DEVICES=0
export MODEL_SIZE=base

python src/main.py output_dir=${ODIR}/exps/dofa_cls_lora_eurosat model=dofa_cls_lora dataset=geobench_eurosat lr=0.002 num_gpus=2 num_workers=8 epochs=10 seed=13
