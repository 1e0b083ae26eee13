"""Caption one shard of an image set on one GPU; run_all.sh starts one process per GPU."""
import argparse
import os

import torch
from flash_attn import flash_attn_func  # noqa: F401  the model's attention kernels
from transformers import AutoModelForCausalLM

parser = argparse.ArgumentParser()
parser.add_argument("--gpu", required=True)
parser.add_argument("--shard", type=int, required=True)
args = parser.parse_args()

os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu

model = AutoModelForCausalLM.from_pretrained(
    "microsoft/Florence-2-large", torch_dtype=torch.bfloat16, trust_remote_code=True
).to("cuda")
print(f"shard {args.shard} on {torch.cuda.get_device_name()}")
