#!/bin/bash
# Discrete MNIST: a single-GPU experiment.
accelerate launch train.py config_file=configs/mnist_discrete.yaml
