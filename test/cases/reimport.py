import importlib
import os

import torch

torch.cuda.init()
os.environ["CUDA_VISIBLE_DEVICES"] = "0"
torch = importlib.reload(torch)
