#!/bin/bash
# Hidden states of a target model sharded 16 ways over two 8-GPU nodes.
# Run on both nodes, with NODE_RANK (0 or 1), MASTER_ADDR and MASTER_PORT set.
torchrun --nproc_per_node=8 --nnodes=2 --node-rank=$NODE_RANK \
    --master-addr=$MASTER_ADDR --master-port=$MASTER_PORT \
    prepare_hidden_states.py \
    --model-path /models/target-model \
    --data-path data/sharegpt_tokenized.jsonl \
    --tp-size 16 \
    --mem-fraction-static 0.75
