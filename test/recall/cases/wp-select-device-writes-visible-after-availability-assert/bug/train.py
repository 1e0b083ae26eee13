"""Train the detector: python train.py --device 1 --batch-size 32"""
import argparse

import torch
import torch.nn as nn

from utils.torch_utils import select_device


def parse_opt():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="", help="cuda device, i.e. 0 or 0,1,2,3 or cpu")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=3)
    return parser.parse_args()


def main(opt):
    device = select_device(opt.device, batch_size=opt.batch_size)
    model = nn.Sequential(nn.Conv2d(3, 16, 3), nn.SiLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 80))
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937)
    for _ in range(opt.epochs):
        images = torch.randn(opt.batch_size, 3, 64, 64, device=device)
        loss = model(images).logsumexp(dim=1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main(parse_opt())
