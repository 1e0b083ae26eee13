"""Entry point of the forecasting benchmark: one experiment per call."""
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--task_name", default="long_term_forecast")
parser.add_argument("--is_training", type=int, default=1)
parser.add_argument("--data", default="ETTh1")
parser.add_argument("--model", default="TimesNet")
parser.add_argument("--seq_len", type=int, default=96)
parser.add_argument("--pred_len", type=int, default=96)
parser.add_argument("--itr", type=int, default=1)
parser.add_argument("--use_gpu", type=bool, default=True)
parser.add_argument("--gpu", type=int, default=0)
args = parser.parse_args()

args.use_gpu = bool(torch.cuda.is_available() and args.use_gpu)
device = torch.device(f"cuda:{args.gpu}") if args.use_gpu else torch.device("cpu")
print(f"{args.model} on {args.data}, pred_len {args.pred_len}: using {device}")

model = nn.Sequential(nn.Flatten(), nn.Linear(args.seq_len * 7, args.pred_len * 7)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
for _ in range(args.itr * 100):
    x = torch.randn(32, args.seq_len, 7, device=device)
    y = torch.randn(32, args.pred_len * 7, device=device)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
