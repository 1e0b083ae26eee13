import os

os.environ["CUDA_VISIBLE_DEVICES"] = 0
import torch

print(torch.__version__)
