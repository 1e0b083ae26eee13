#!/bin/bash
# Only GPU 6 of this 8-GPU server is free, and port 29500 is taken by another job.
CUDA_VISIBLE_DEVICE="6" accelerate launch --main_process_port 5432 train_classifier.py --epochs 3 --lr 3e-5
