#!/bin/bash
torchrun --standalone --nproc_per_node=4 multigpu_torchrun.py 50 32
