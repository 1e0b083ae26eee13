"""Fine-tune a small classifier on the node's GPU."""
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
args = parser.parse_args()

if not torch.cuda.is_available():
    raise SystemExit("no CUDA device visible")
device = torch.device("cuda")
model = torch.nn.Sequential(torch.nn.Linear(512, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).to(device)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for epoch in range(args.epochs):
    x = torch.randn(256, 512, device=device)
    y = torch.randint(0, 10, (256,), device=device)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(epoch, loss.item())
