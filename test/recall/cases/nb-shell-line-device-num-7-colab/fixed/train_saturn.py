import argparse
import os

import pandas as pd
import torch
import torch.nn as nn


class MacrogeneEncoder(nn.Module):
    def __init__(self, num_genes, num_macrogenes, hidden=256, latent=256):
        super().__init__()
        self.to_macrogenes = nn.Linear(num_genes, num_macrogenes, bias=False)
        self.encoder = nn.Sequential(nn.Linear(num_macrogenes, hidden), nn.ReLU(), nn.Linear(hidden, latent))

    def forward(self, expression):
        return self.encoder(torch.relu(self.to_macrogenes(expression)))


def main():
    parser = argparse.ArgumentParser(description="Train the cross-species embedding")
    parser.add_argument("--in_data", type=str, required=True, help="csv listing the AnnData files and species")
    parser.add_argument("--in_label_col", type=str)
    parser.add_argument("--ref_label_col", type=str)
    parser.add_argument("--num_macrogenes", type=int, default=2000)
    parser.add_argument("--hv_genes", type=int, default=8000)
    parser.add_argument("--centroids_init_path", type=str)
    parser.add_argument("--work_dir", type=str, default=".")
    parser.add_argument("--device_num", type=int, default=0, help="GPU number")
    args = parser.parse_args()

    runs = pd.read_csv(args.in_data)
    torch.cuda.set_device(args.device_num)
    device = torch.device("cuda")
    print(f"Using device {args.device_num} for {len(runs)} species")

    model = MacrogeneEncoder(args.hv_genes, args.num_macrogenes).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(100):
        batch = torch.rand(512, args.hv_genes, device=device)
        loss = model(batch).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    os.makedirs(os.path.join(args.work_dir, "saturn_results"), exist_ok=True)
    torch.save(model.state_dict(), os.path.join(args.work_dir, "saturn_results", "encoder.pt"))


if __name__ == "__main__":
    main()
