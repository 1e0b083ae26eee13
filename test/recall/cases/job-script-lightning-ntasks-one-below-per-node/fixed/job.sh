#!/bin/bash
#SBATCH --job-name=seg-train
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=2
#SBATCH --gres=gpu:2
#SBATCH --cpus-per-task=3
#SBATCH --time=04:00:00

source .venv/bin/activate
srun python train_seg.py
