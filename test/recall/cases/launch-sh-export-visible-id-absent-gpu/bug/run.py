"""Long-sequence forecasting experiment runner."""
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="Autoformer")
parser.add_argument("--data", default="ETTh1")
parser.add_argument("--use_gpu", type=bool, default=True)
parser.add_argument("--gpu", type=int, default=0)
args = parser.parse_args()

args.use_gpu = bool(torch.cuda.is_available() and args.use_gpu)
device = torch.device(f"cuda:{args.gpu}") if args.use_gpu else torch.device("cpu")
print("Use", device)
