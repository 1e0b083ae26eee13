import os

from accelerate import Accelerator

accelerator = Accelerator(mixed_precision="bf16")
os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"
