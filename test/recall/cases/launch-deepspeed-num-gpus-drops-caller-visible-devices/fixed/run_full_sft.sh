#!/bin/bash
# GPUs 0-3 of this 8-GPU node run someone else's job: full fine-tuning goes on 4-7
# (single_node.sh names them with deepspeed --include).
cd examples/full_multi_gpu
bash single_node.sh
