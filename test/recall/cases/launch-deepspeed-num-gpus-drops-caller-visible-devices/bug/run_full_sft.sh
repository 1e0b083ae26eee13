#!/bin/bash
# GPUs 0-3 of this 8-GPU node run someone else's job: full fine-tuning goes on 4-7.
cd examples/full_multi_gpu
CUDA_VISIBLE_DEVICES=4,5,6,7 bash single_node.sh
