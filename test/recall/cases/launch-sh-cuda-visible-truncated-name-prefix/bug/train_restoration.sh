#!/usr/bin/env bash
# Train the restoration model on one chosen GPU of a shared workstation.
set -euo pipefail

CONFIG=configs/restoration/basicvsr_reds4.py
WORK_DIR=work_dirs/basicvsr_reds4

CUDA_VISIBLE=0 python tools/train.py "$CONFIG" --work-dir "$WORK_DIR"
