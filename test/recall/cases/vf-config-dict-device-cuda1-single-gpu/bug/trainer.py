import os
from typing import Dict

import torch
from torch.utils.data import DataLoader
from torchvision import transforms
from torchvision.datasets import CIFAR10
from torchvision.utils import save_image

from unet import UNet


def diffusion_loss(model, x_0, betas):
    t = torch.randint(len(betas), (x_0.shape[0],), device=x_0.device)
    alpha_bar = torch.cumprod(1.0 - betas, dim=0)[t].view(-1, 1, 1, 1)
    noise = torch.randn_like(x_0)
    x_t = alpha_bar.sqrt() * x_0 + (1.0 - alpha_bar).sqrt() * noise
    return torch.nn.functional.mse_loss(model(x_t, t), noise)


def train(config: Dict):
    device = torch.device(config["device"])
    dataset = CIFAR10(root="./CIFAR10", train=True, download=True, transform=transforms.Compose([
        transforms.RandomHorizontalFlip(), transforms.ToTensor(), transforms.Normalize((0.5,) * 3, (0.5,) * 3)]))
    loader = DataLoader(dataset, batch_size=config["batch_size"], shuffle=True, num_workers=4, drop_last=True)
    model = UNet(config["channel"], config["channel_mult"], config["num_res_blocks"], config["dropout"]).to(device)
    betas = torch.linspace(config["beta_1"], config["beta_T"], config["T"], device=device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"], weight_decay=1e-4)
    os.makedirs(config["save_weight_dir"], exist_ok=True)
    for epoch in range(config["epoch"]):
        for images, _ in loader:
            loss = diffusion_loss(model, images.to(device), betas)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), config["grad_clip"])
            optimizer.step()
        torch.save(model.state_dict(), os.path.join(config["save_weight_dir"], f"ckpt_{epoch}_.pt"))


def sample(config: Dict):
    device = torch.device(config["device"])
    model = UNet(config["channel"], config["channel_mult"], config["num_res_blocks"], 0.0).to(device)
    path = os.path.join(config["save_weight_dir"], config["test_load_weight"])
    model.load_state_dict(torch.load(path, map_location=device))
    noise = torch.randn(config["batch_size"], 3, config["img_size"], config["img_size"], device=device)
    os.makedirs(config["sampled_dir"], exist_ok=True)
    save_image(noise * 0.5 + 0.5, os.path.join(config["sampled_dir"], "noise.png"), nrow=8)
