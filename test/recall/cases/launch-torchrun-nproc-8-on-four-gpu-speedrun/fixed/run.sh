#!/bin/bash
# GPT-2 speedrun: one worker per GPU of the node (this server has four).
torchrun --standalone --nproc_per_node=4 train_gpt2.py
