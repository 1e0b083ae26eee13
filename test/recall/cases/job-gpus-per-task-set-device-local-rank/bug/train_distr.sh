#!/bin/bash
#SBATCH --job-name=mlip_distr
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=8
#SBATCH --cpus-per-task=8
#SBATCH --mem=100G
#SBATCH --time=48:00:00
#SBATCH --gpus-per-task=1

export NUMEXPR_MAX_THREADS=$SLURM_CPUS_PER_TASK
srun python train.py --distributed
