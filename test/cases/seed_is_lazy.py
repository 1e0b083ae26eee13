import os
import torch

torch.cuda.manual_seed(1234)
os.environ["CUDA_VISIBLE_DEVICES"] = "0"
