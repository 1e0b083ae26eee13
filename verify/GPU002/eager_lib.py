"""Stands for any library that initialises CUDA at import time."""
import torch

torch.cuda.init()
