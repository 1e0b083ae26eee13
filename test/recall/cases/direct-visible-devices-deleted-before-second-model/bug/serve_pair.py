"""Serve a chat model and a judge model, each on the GPU with the most free memory."""
import os
import subprocess

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def freest_gpu():
    out = subprocess.check_output(
        ["nvidia-smi", "--query-gpu=memory.free", "--format=csv,noheader,nounits"], text=True
    )
    free = [int(line) for line in out.split()]
    return max(range(len(free)), key=free.__getitem__)


os.environ["CUDA_VISIBLE_DEVICES"] = str(freest_gpu())
tok = AutoTokenizer.from_pretrained("Qwen/Qwen1.5-7B-Chat")
chat = AutoModelForCausalLM.from_pretrained("Qwen/Qwen1.5-7B-Chat", torch_dtype=torch.float16).to("cuda")

# let the judge go to another card
del os.environ["CUDA_VISIBLE_DEVICES"]
judge_gpu = freest_gpu()
judge = AutoModelForCausalLM.from_pretrained("Qwen/Qwen1.5-1.8B-Chat", torch_dtype=torch.float16)
judge = judge.to(f"cuda:{judge_gpu}")

prompt = tok("Is the sky green? Answer yes or no.", return_tensors="pt").to("cuda")
print(tok.decode(chat.generate(**prompt, max_new_tokens=8)[0]))
