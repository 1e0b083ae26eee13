#!/bin/bash
for i in 0 1 2 3; do
  CUDA_VISIBLE_DEVICES="$i" python caption_shard.py --shard "$i" &
done
wait
