"""Fine-tune a SAM-based ultrasound segmentation model."""
import argparse
import os
os.environ["CUDA_VISIBLE_DEVICES"] = "3"

import torch
from torch.utils.data import DataLoader

parser = argparse.ArgumentParser()
parser.add_argument("--modelname", default="SAMUS")
parser.add_argument("--batch_size", type=int, default=8)
args = parser.parse_args()

device = torch.device("cuda")
model = torch.nn.Conv2d(1, 1, 3).to(device)
loader = DataLoader(list(range(64)), batch_size=args.batch_size)
print(f"training {args.modelname} on {torch.cuda.get_device_name(0)}")
