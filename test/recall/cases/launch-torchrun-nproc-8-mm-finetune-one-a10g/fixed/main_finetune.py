"""Parameter-efficient fine-tuning of a multimodal LLaMA (Q-Former + LoRA adapters)."""
import argparse

import torch

from util import misc


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--output_dir", required=True)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--warmup_epochs", type=float, default=0.2)
    p.add_argument("--batch_size", type=int, default=16)
    p.add_argument("--accum_iter", type=int, default=1)
    p.add_argument("--num_workers", type=int, default=8)
    p.add_argument("--max_words", type=int, default=512)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--min_lr", type=float, default=5e-6)
    p.add_argument("--weight_decay", type=float, default=0.02)
    p.add_argument("--llama_config", nargs="+", default=[])
    p.add_argument("--tokenizer_path", required=True)
    p.add_argument("--pretrained_path", required=True)
    p.add_argument("--quant", action="store_true")
    p.add_argument("--only_save_trainable", action="store_true")
    p.add_argument("--device", default="cuda")
    return p.parse_args()


def main(args):
    misc.init_distributed_mode(args)
    device = torch.device(args.device)
    adapter = torch.nn.Linear(5120, 5120).to(device)  # stands in for the Q-Former and LoRA weights
    optimizer = torch.optim.AdamW(adapter.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    for epoch in range(args.epochs):
        x = torch.randn(args.batch_size, 5120, device=device)
        loss = adapter(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main(get_args())
