"""Two local language models talk to each other; each gets its own GPU."""
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

MODEL_A = "Qwen/Qwen2.5-1.5B-Instruct"
MODEL_B = "microsoft/Phi-3-mini-4k-instruct"

tok_a = AutoTokenizer.from_pretrained(MODEL_A)
model_a = AutoModelForCausalLM.from_pretrained(MODEL_A, torch_dtype=torch.bfloat16).to("cuda:0")
tok_b = AutoTokenizer.from_pretrained(MODEL_B)
model_b = AutoModelForCausalLM.from_pretrained(MODEL_B, torch_dtype=torch.bfloat16).to("cuda:0")


def reply(model, tok, text):
    ids = tok(text, return_tensors="pt").to(model.device)
    out = model.generate(**ids, max_new_tokens=128)
    return tok.decode(out[0], skip_special_tokens=True)


print(reply(model_b, tok_b, reply(model_a, tok_a, "Hello!")))
