#!/bin/bash
# Chat with the 13B model: its checkpoint holds two model-parallel shards,
# so the README starts one process per shard.
torchrun --nproc_per_node 2 chat_completion.py \
    --ckpt_dir llama-2-13b-chat/ \
    --tokenizer_path tokenizer.model \
    --max_seq_len 512 --max_batch_size 4
