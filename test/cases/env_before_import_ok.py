"""Pins the run to the first two GPUs before torch starts."""
import os

os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"

import torch

if torch.cuda.device_count() > 1:
    head = torch.nn.Linear(4, 4).to("cuda:1")
