#!/bin/bash
# one GPU of the cluster node
torchrun --nproc-per-node 1 --master_port $RANDOM -m train example/7B.yaml
