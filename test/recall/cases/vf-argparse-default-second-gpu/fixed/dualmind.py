import argparse

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def parse_args():
    p = argparse.ArgumentParser(description="Two models talk to each other, one per GPU.")
    p.add_argument("--model-a", default="Qwen/Qwen2.5-7B-Instruct")
    p.add_argument("--model-b", default="meta-llama/Llama-3.1-8B-Instruct")
    p.add_argument("--device-a", default="cuda:0")
    # Second model on the second GPU when there is one, else share the first.
    p.add_argument("--device-b", default="cuda:1" if torch.cuda.device_count() > 1 else "cuda:0")
    p.add_argument("--turns", type=int, default=6)
    return p.parse_args()


def load(name, device):
    tok = AutoTokenizer.from_pretrained(name)
    model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.bfloat16).to(device)
    return tok, model


def reply(tok, model, device, text):
    ids = tok(text, return_tensors="pt").to(device)
    out = model.generate(**ids, max_new_tokens=200, do_sample=True, temperature=0.8)
    return tok.decode(out[0][ids["input_ids"].shape[1]:], skip_special_tokens=True)


def main():
    args = parse_args()
    tok_a, model_a = load(args.model_a, torch.device(args.device_a))
    tok_b, model_b = load(args.model_b, torch.device(args.device_b))
    message = "Let's discuss whether machines can be curious."
    for turn in range(args.turns):
        message = reply(tok_a, model_a, args.device_a, message) if turn % 2 == 0 else reply(tok_b, model_b, args.device_b, message)
        print(f"[{'A' if turn % 2 == 0 else 'B'}] {message}")


if __name__ == "__main__":
    main()
