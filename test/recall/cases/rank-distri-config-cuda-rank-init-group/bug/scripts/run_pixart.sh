#!/bin/bash
export PYTHONPATH=$PWD:$PYTHONPATH
torchrun --nproc_per_node=8 scripts/pixart_example.py \
    --model_id PixArt-alpha/PixArt-XL-2-1024-MS --height 1024 --width 1024 \
    --prompt "A double decker bus driving down the street."
