import os

os.environ["CUDA_VISIBLE_DEVICE"] = "1"
import torch
