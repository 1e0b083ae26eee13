import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def pick_attention():
    # Queried in the child, after the parent restricted CUDA_VISIBLE_DEVICES for it;
    # nothing touches CUDA when this module is imported by the parent.
    if torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 0):
        return "flash_attention_2"
    return "sdpa"


def run_engine_core(dp_rank, gpus_per_rank, model_name, requests):
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    model = AutoModelForCausalLM.from_pretrained(model_name, torch_dtype=torch.bfloat16, attn_implementation=pick_attention()).to("cuda")
    for prompt in requests:
        ids = tokenizer(prompt, return_tensors="pt").to("cuda")
        out = model.generate(**ids, max_new_tokens=32)
        print(dp_rank, tokenizer.decode(out[0], skip_special_tokens=True))
