#!/bin/bash
#SBATCH -C gpu
#SBATCH -A ntrain_g
#SBATCH --ntasks-per-node 4
#SBATCH --cpus-per-task 32
#SBATCH --gpus-per-node 4
#SBATCH --time=0:30:00
#SBATCH --image=nersc/pytorch-tutorial:22.02
#SBATCH -J crop64-ddp
#SBATCH -o %x-%j.out

DATADIR=$SCRATCH/cosmo/data
LOGDIR=$SCRATCH/cosmo/logs
mkdir -p ${LOGDIR}
args="${@}"

export NCCL_NET_GDR_LEVEL=PHB
export MASTER_ADDR=$(hostname)

set -x
srun -u shifter -V ${DATADIR}:/data -V ${LOGDIR}:/logs \
    bash -c "
    source export_DDP_vars.sh
    python train.py ${args}
    "
