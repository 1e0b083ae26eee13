#!/bin/bash
# GPU 0 is busy with another job: train on GPU 1.
CUDA_VISIBLE_DEVICES=1 python image_train.py --data_dir data/ffhq --batch_size 8 --lr 2e-5 --p2_gamma 1 --p2_k 1
