#!/bin/bash
# Two batches at once, one per GPU.
CUDA_VISIBLE_DEVICES=0 python inference.py --input "albums/a/*.wav" --output_folder out/a &
CUDA_VISIBLE_DEVICES=1 python inference.py --input "albums/b/*.wav" --output_folder out/b &
wait
