#!/bin/bash
set -x
python train.py --dataroot ./datasets/font --name font_gan_run --batch_size 256
