#!/bin/bash
# GPU 0 is taken by another user: sample on GPU 1.
CUDA_VISIBLE_DEVICES=1 python image_sample.py --model_path models/ema_64x64.pt --batch_size 16
