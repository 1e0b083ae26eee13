#!/bin/bash
# CI job on a self-hosted multi-GPU runner; the runner exports CUDA_VISIBLE_DEVICES
# (e.g. 1) to give each job its own GPU.
set -euo pipefail

docker build -t solver-ci:gpu -f docker/Dockerfile.nvidia .
docker run --rm \
  --gpus "device=${CUDA_VISIBLE_DEVICES:-all}" \
  --env SOLVER_PLATFORM=nvidiaX \
  solver-ci:gpu pytest -m gpu tests/
