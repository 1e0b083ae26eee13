#!/bin/bash
for i in 0 1 2 3; do
  python caption_shard.py --gpu "$i" --shard "$i" &
done
wait
