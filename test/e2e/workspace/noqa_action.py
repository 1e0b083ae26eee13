import os
import torch

ok = torch.cuda.is_available()
os.environ["CUDA_VISIBLE_DEVICES"] = "1"
