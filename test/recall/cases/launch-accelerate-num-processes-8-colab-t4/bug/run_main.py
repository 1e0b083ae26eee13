"""Long-term forecasting with a reprogrammed backbone, trained through Accelerate."""
import argparse

import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="TimeLLM")
parser.add_argument("--seq_len", type=int, default=512)
parser.add_argument("--pred_len", type=int, default=96)
parser.add_argument("--enc_in", type=int, default=7)
parser.add_argument("--d_model", type=int, default=32)
parser.add_argument("--d_ff", type=int, default=128)
parser.add_argument("--llm_layers", type=int, default=32)
parser.add_argument("--batch_size", type=int, default=24)
parser.add_argument("--learning_rate", type=float, default=0.01)
parser.add_argument("--train_epochs", type=int, default=100)
parser.add_argument("--model_comment", default="none")
args = parser.parse_args()

accelerator = Accelerator()

# sliding windows of the series (random values stand in for the ETTh1 csv)
x = torch.randn(2048, args.seq_len, args.enc_in)
y = torch.randn(2048, args.pred_len, args.enc_in)
loader = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=True)

model = nn.Sequential(
    nn.Flatten(),
    nn.Linear(args.seq_len * args.enc_in, args.d_ff),
    nn.GELU(),
    nn.Linear(args.d_ff, args.pred_len * args.enc_in),
)
optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

for epoch in range(args.train_epochs):
    for batch_x, batch_y in loader:
        pred = model(batch_x).view_as(batch_y)
        loss = nn.functional.mse_loss(pred, batch_y)
        optimizer.zero_grad()
        accelerator.backward(loss)
        optimizer.step()
    accelerator.print(f"{args.model_comment} epoch {epoch + 1}: loss {loss.item():.4f}")
