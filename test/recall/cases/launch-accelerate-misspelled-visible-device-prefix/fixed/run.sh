#!/bin/bash
# Only GPU 6 of this 8-GPU server is free, and port 29500 is taken by another job.
CUDA_VISIBLE_DEVICES="6" accelerate launch --num_processes 1 --main_process_port 5432 train_classifier.py --epochs 3 --lr 3e-5
