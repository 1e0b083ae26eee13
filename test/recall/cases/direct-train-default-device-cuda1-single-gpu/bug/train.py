import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class TabularDenoiser(nn.Module):
    def __init__(self, d_in, d_hidden=256):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in + 1, d_hidden), nn.SiLU(), nn.Linear(d_hidden, d_in))

    def forward(self, x, t):
        return self.net(torch.cat([x, t[:, None]], dim=1))


def train(rows, steps=1000, lr=1e-3, device=torch.device("cuda:1")):
    model = TabularDenoiser(rows.shape[1]).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    loader = DataLoader(TensorDataset(rows), batch_size=256, shuffle=True)
    step = 0
    while step < steps:
        for (x,) in loader:
            x = x.to(device)
            t = torch.rand(x.shape[0], device=device)
            noise = torch.randn_like(x)
            loss = ((model(x + t[:, None] * noise, t) - noise) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()
    data = torch.randn(10_000, 16)
    train(data, steps=args.steps)
