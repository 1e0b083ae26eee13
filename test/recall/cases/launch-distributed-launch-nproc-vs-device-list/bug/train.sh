#!/bin/bash
python -m torch.distributed.launch --nproc_per_node 8 train.py --batch 32 --conf configs/detector_s.py --data data/chess.yaml --device 0,1
