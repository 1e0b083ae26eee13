#!/bin/bash
# Run on both nodes with NODE_RANK=0 and NODE_RANK=1.
torchrun --nnodes=2 --nproc_per_node=4 --node_rank=$NODE_RANK \
    --master_addr=$MASTER_ADDR --master_port=29400 train_retriever.py
