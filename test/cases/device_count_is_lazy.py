import os
import torch

if torch.cuda.device_count() == 0:
    raise SystemExit("no GPU")
os.environ["CUDA_VISIBLE_DEVICES"] = "1"
