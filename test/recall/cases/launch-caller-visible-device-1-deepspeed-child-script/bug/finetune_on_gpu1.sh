#!/bin/bash
# GPU 0 of the four A100s is busy with another job: fine-tune on the second card only.
CUDA_VISIBLE_DEVICES=1 bash finetune/scripts/run_sft_6b.sh
