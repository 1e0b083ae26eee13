import argparse
import os
import random

import numpy as np
import torch

from exp_main import ExpMain

parser = argparse.ArgumentParser(description="State-space forecaster for long time series")
parser.add_argument("--data", type=str, default="ETTh1")
parser.add_argument("--seq_len", type=int, default=96)
parser.add_argument("--pred_len", type=int, default=96)
parser.add_argument("--enc_in", type=int, default=7)
parser.add_argument("--train_epochs", type=int, default=10)
parser.add_argument("--use_gpu", type=bool, default=True)
parser.add_argument("--gpu", type=int, default=0)
parser.add_argument("--use_multi_gpu", action="store_true", default=False)
parser.add_argument("--devices", type=str, default="0,1,2,3", help="GPU ids for a multi-GPU run")
args = parser.parse_args()

# Select the GPUs before anything asks CUDA about devices.
args.devices = args.devices.replace(" ", "")
os.environ["CUDA_VISIBLE_DEVICES"] = args.devices if args.use_multi_gpu else str(args.gpu)

random.seed(2024)
np.random.seed(2024)
torch.manual_seed(2024)

args.use_gpu = torch.cuda.is_available() and args.use_gpu

if args.use_gpu and args.use_multi_gpu:
    # Inside the process the visible GPUs are renumbered from 0.
    args.device_ids = list(range(len(args.devices.split(","))))
    args.gpu = args.device_ids[0]
else:
    args.gpu = 0

setting = f"{args.data}_sl{args.seq_len}_pl{args.pred_len}"
exp = ExpMain(args)
exp.train(setting)
