#!/bin/bash
# One GPU here: the two-shard 13B checkpoint needs two processes on two GPUs,
# so this machine chats with the single-shard 7B model, one process.
torchrun --nproc_per_node 1 chat_completion.py \
    --ckpt_dir llama-2-7b-chat/ \
    --tokenizer_path tokenizer.model \
    --max_seq_len 512 --max_batch_size 4
