#!/bin/bash
# GPU 0 of this workstation is busy with another job; tables go on GPU 1
CUDA_VISIBLE_DEVICES=1 python extract_tables.py papers/ tables/
