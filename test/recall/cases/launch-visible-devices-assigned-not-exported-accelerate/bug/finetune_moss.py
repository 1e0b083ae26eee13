"""Supervised fine-tuning of a chat model with Accelerate + DeepSpeed ZeRO-3."""
import argparse
import json
import os

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer


def load_samples(data_dir, tokenizer, max_len=2048):
    samples = []
    with open(os.path.join(data_dir, "train.jsonl")) as f:
        for line in f:
            ids = tokenizer(json.loads(line)["text"], truncation=True, max_length=max_len)["input_ids"]
            samples.append(torch.tensor(ids))
    return samples


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name_or_path", required=True)
    parser.add_argument("--data_dir", required=True)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--n_epochs", type=int, default=2)
    parser.add_argument("--train_bsz_per_gpu", type=int, default=1)
    parser.add_argument("--learning_rate", type=float, default=1.5e-5)
    args = parser.parse_args()

    accelerator = Accelerator()
    accelerator.print(f"training on {accelerator.device}")
    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path, trust_remote_code=True)
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path, trust_remote_code=True)
    loader = DataLoader(load_samples(args.data_dir, tokenizer), batch_size=args.train_bsz_per_gpu, shuffle=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    for epoch in range(args.n_epochs):
        for ids in loader:
            loss = model(input_ids=ids, labels=ids).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        accelerator.print(f"epoch {epoch} loss {loss.item():.4f}")
    accelerator.wait_for_everyone()
    accelerator.unwrap_model(model).save_pretrained(args.output_dir, save_function=accelerator.save)


if __name__ == "__main__":
    main()
