import os

os.putenv("CUDA_VISIBLE_DEVICES", "0")
import torch
