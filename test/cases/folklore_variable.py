import os

os.environ["CUDA_DEVICE"] = "1"
import torch
