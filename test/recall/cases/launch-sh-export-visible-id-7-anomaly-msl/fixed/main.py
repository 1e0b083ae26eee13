"""Anomaly detection on multivariate telemetry with an association-discrepancy transformer."""
import argparse

import torch
import torch.nn as nn


class WindowAttention(nn.Module):
    def __init__(self, win_size, d_model):
        super().__init__()
        self.proj = nn.Linear(d_model, 3 * d_model)
        idx = torch.arange(win_size, dtype=torch.float32)
        # distances between positions, used for the Gaussian prior
        self.distances = (idx[:, None] - idx[None, :]).abs().cuda()

    def forward(self, x):
        q, k, v = self.proj(x).chunk(3, dim=-1)
        attn = torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, dim=-1)
        return attn @ v


def run(args):
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Linear(args.input_c, 512), WindowAttention(args.win_size, 512),
                          nn.Linear(512, args.output_c)).to(device)
    if args.mode == "train":
        optim = torch.optim.Adam(model.parameters(), lr=1e-4)
        for _ in range(100):
            x = torch.randn(args.batch_size, args.win_size, args.input_c, device=device)
            loss = nn.functional.mse_loss(model(x), x[..., : args.output_c])
            optim.zero_grad()
            loss.backward()
            optim.step()
        torch.save(model.state_dict(), f"checkpoints/{args.dataset}.pth")
    else:
        model.load_state_dict(torch.load(f"checkpoints/{args.dataset}.pth", map_location=device))
        print("threshold at", args.anormly_ratio, "% anomalies")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["train", "test"], default="train")
    parser.add_argument("--dataset", default="MSL")
    parser.add_argument("--data_path", default="dataset/MSL")
    parser.add_argument("--input_c", type=int, default=55)
    parser.add_argument("--output_c", type=int, default=55)
    parser.add_argument("--win_size", type=int, default=100)
    parser.add_argument("--batch_size", type=int, default=256)
    parser.add_argument("--anormly_ratio", type=float, default=1.0)
    run(parser.parse_args())
