#!/bin/bash
# GPUs 0 and 1 are busy with another job: train on 2 and 3, one worker each.
CUDA_VISIBLE_DEVICES=2,3 NGPU=2 CONFIG_FILE=./train_configs/llama3_8b.toml ./run_llama_train.sh
