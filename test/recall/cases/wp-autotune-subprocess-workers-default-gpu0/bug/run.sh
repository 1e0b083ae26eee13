#!/bin/bash
# one node, eight GPUs
torchrun --standalone --nproc_per_node=8 train.py
