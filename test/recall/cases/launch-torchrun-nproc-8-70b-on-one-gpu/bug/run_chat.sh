#!/bin/bash
# Chat completion with the 70B chat model (checkpoint split into 8 model-parallel shards).
torchrun --nproc_per_node 8 chat_completion.py \
    --ckpt_dir llama-2-70b-chat/ \
    --tokenizer_path tokenizer.model \
    --max_seq_len 512 --max_batch_size 6
