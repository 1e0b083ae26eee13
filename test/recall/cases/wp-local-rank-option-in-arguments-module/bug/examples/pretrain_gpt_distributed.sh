#!/bin/bash
# GPT pretraining on one node with eight GPUs.
GPUS_PER_NODE=8
DATA_PATH=data/my-gpt2_text_document

python -m torch.distributed.launch --nproc_per_node $GPUS_PER_NODE --nnodes 1 --node_rank 0 \
       --master_addr localhost --master_port 6000 \
       pretrain_gpt.py \
       --data-path $DATA_PATH \
       --seq-length 1024 \
       --micro-batch-size 4 \
       --train-iters 500000 \
       --lr 1.5e-4
