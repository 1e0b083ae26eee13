import os
import torch
import torch.nn as nn

os.environ["CUDA_VISIBLE_DEVICES"] = "0"
layer = nn.Linear(16, 16).to("cuda")
