"""Train a Bayesian Flow Network on binarised MNIST."""
import os
os.environ["CUDA_VISIBLE_DEVICES"] = "1"  # this experiment runs on the second GPU

import torch
import torch.nn as nn
from accelerate import Accelerator
from omegaconf import OmegaConf
from torch.utils.data import DataLoader, TensorDataset


def main():
    cfg = OmegaConf.load(OmegaConf.from_cli().config_file)
    accelerator = Accelerator()
    images = (torch.rand(6000, 784) > 0.5).float()
    loader = DataLoader(TensorDataset(images), batch_size=cfg.batch_size, shuffle=True)
    net = nn.Sequential(nn.Linear(785, 1024), nn.GELU(), nn.Linear(1024, 784))
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr)
    net, opt, loader = accelerator.prepare(net, opt, loader)
    for epoch in range(cfg.epochs):
        for (x,) in loader:
            t = torch.rand(x.shape[0], 1, device=x.device)
            noisy = t * (2 * x - 1) + (1 - t) * torch.randn_like(x)
            logits = net(torch.cat([noisy, t], dim=1))
            loss = nn.functional.binary_cross_entropy_with_logits(logits, x)
            opt.zero_grad()
            accelerator.backward(loss)
            opt.step()
        accelerator.print(f"epoch {epoch}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
