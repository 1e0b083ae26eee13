"""Contrastive fine-tuning of a sentence-embedding model with Accelerate."""
import argparse
import json

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import AutoModel, AutoTokenizer


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name_or_path", required=True)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--batch_size", type=int, default=4)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--epochs", type=int, default=2)
    return parser.parse_args()


def main():
    args = parse_args()
    accelerator = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    model = AutoModel.from_pretrained(args.model_name_or_path)
    with open(args.dataset) as f:
        pairs = [json.loads(line) for line in f]
    loader = DataLoader(pairs, batch_size=args.batch_size, shuffle=True,
                        collate_fn=lambda b: ([x["query"] for x in b], [x["pos"] for x in b]))
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    for _ in range(args.epochs):
        for queries, passages in loader:
            q = tokenizer(queries, padding=True, truncation=True, return_tensors="pt").to(accelerator.device)
            p = tokenizer(passages, padding=True, truncation=True, return_tensors="pt").to(accelerator.device)
            qe = F.normalize(model(**q).last_hidden_state[:, 0], dim=-1)
            pe = F.normalize(model(**p).last_hidden_state[:, 0], dim=-1)
            loss = F.cross_entropy(qe @ pe.T / 0.02, torch.arange(len(queries), device=accelerator.device))
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
    accelerator.unwrap_model(model).save_pretrained(args.output_dir)


if __name__ == "__main__":
    main()
