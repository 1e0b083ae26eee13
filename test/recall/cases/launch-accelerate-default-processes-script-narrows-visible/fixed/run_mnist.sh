#!/bin/bash
# Discrete MNIST: a single-GPU experiment. Pick the GPU here and start one process.
CUDA_VISIBLE_DEVICES=1 accelerate launch --num_processes=1 train.py config_file=configs/mnist_discrete.yaml
