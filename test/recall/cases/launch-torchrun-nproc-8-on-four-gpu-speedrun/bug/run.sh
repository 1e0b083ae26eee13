#!/bin/bash
# GPT-2 speedrun: one worker per GPU of the node.
torchrun --standalone --nproc_per_node=8 train_gpt2.py
