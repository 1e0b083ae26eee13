#!/bin/bash
# Run on each of the two 8-GPU nodes, with NODE_RANK=0 or 1 and MASTER_ADDR set.
torchrun --nnodes=2 --nproc_per_node=8 --node_rank=$NODE_RANK \
    --master_addr=$MASTER_ADDR --master_port=29500 \
    train.py --global-batch-size 256
