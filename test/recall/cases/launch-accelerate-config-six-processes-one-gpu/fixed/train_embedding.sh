#!/bin/bash
# Fine-tune a multilingual embedding model (bge-m3 / XLM-RoBERTa) on our retrieval pairs.
mkdir -p ./output ./logs

CUDA_VISIBLE_DEVICES="0" nohup accelerate launch --config_file config/xlmroberta_fsdp.yaml train_embedding.py \
    --model_name_or_path "BAAI/bge-m3" \
    --dataset "data/train_pairs.jsonl" \
    --output_dir "./output/bge_m3_ft" \
    --batch_size 4 \
    --lr 2e-5 \
    --epochs 2 \
    > ./logs/bge_m3_ft.log 2>&1 &
