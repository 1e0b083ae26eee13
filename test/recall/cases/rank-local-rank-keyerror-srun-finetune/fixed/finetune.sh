#!/bin/bash
#SBATCH --job-name=chem-finetune
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=2
#SBATCH --gres=gpu:2
#SBATCH --cpus-per-task=8
#SBATCH --time=12:00:00

nvidia-smi
srun python finetune.py --data reactions.csv --epochs 50
