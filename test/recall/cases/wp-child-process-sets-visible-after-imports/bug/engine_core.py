import os

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

# Decide the attention kernel once, when the module is imported.
USE_FLASH = torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 0)


def run_engine_core(dp_rank, gpus_per_rank, model_name, requests):
    first = dp_rank * gpus_per_rank
    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(first + i) for i in range(gpus_per_rank))

    tokenizer = AutoTokenizer.from_pretrained(model_name)
    attn = "flash_attention_2" if USE_FLASH else "sdpa"
    model = AutoModelForCausalLM.from_pretrained(model_name, torch_dtype=torch.bfloat16, attn_implementation=attn).to("cuda")
    for prompt in requests:
        ids = tokenizer(prompt, return_tensors="pt").to("cuda")
        out = model.generate(**ids, max_new_tokens=32)
        print(dp_rank, tokenizer.decode(out[0], skip_special_tokens=True))
