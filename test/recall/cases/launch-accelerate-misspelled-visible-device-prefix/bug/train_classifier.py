"""Sentiment classifier fine-tuning with Accelerate (one process per visible GPU)."""
import argparse

import torch
from accelerate import Accelerator
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=2e-5)
    args = parser.parse_args()

    accelerator = Accelerator(mixed_precision="fp16")
    accelerator.print(f"{accelerator.num_processes} process(es), this one on {accelerator.device}")

    tokenizer = AutoTokenizer.from_pretrained("distilbert-base-uncased")
    model = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased", num_labels=2)
    data = load_dataset("imdb", split="train[:2000]")
    data = data.map(lambda b: tokenizer(b["text"], truncation=True, padding="max_length", max_length=256), batched=True)
    data.set_format("torch", columns=["input_ids", "attention_mask", "label"])
    loader = DataLoader(data, batch_size=16, shuffle=True)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(args.epochs):
        model.train()
        for batch in loader:
            out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["label"])
            accelerator.backward(out.loss)
            optimizer.step()
            optimizer.zero_grad()
        accelerator.print(f"epoch {epoch}: loss {out.loss.item():.4f}")


if __name__ == "__main__":
    main()
