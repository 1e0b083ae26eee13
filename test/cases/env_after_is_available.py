import os

import torch

use_gpu = torch.cuda.is_available()
os.environ["CUDA_VISIBLE_DEVICES"] = "3"
device = torch.device("cuda" if use_gpu else "cpu")
