#!/bin/bash
# run on node 1 (node 0 has 8 GPUs, node 1 has 2)
accelerate launch --config_file node1.yaml train.py --epochs 2
