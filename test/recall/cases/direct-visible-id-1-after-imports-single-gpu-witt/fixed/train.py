"""Train a wireless image transmission model (Swin encoder/decoder over an AWGN channel)."""
import argparse
import os
from datetime import datetime

# Default to the first GPU; a CUDA_VISIBLE_DEVICES given on the command line wins.
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")

import torch
import torch.nn as nn
import torch.optim as optim

torch.backends.cudnn.benchmark = True

parser = argparse.ArgumentParser(description="WITT")
parser.add_argument("--training", action="store_true")
parser.add_argument("--trainset", default="CIFAR10", choices=["CIFAR10", "DIV2K"])
parser.add_argument("--channel-type", default="awgn", choices=["awgn", "rayleigh"])
parser.add_argument("--multiple-snr", default="1,4,7,10,13")
args = parser.parse_args()


class Config:
    seed = 1024
    device = torch.device("cuda:0")
    learning_rate = 1e-4
    batch_size = 128
    workdir = "./history/" + datetime.now().strftime("%Y%m%d-%H%M%S")


def awgn(x, snr_db):
    sigma = (10 ** (-snr_db / 10)) ** 0.5
    return x + sigma * torch.randn_like(x)


def main():
    torch.manual_seed(Config.seed)
    net = nn.Sequential(nn.Conv2d(3, 96, 4, stride=4), nn.GELU(),
                        nn.ConvTranspose2d(96, 3, 4, stride=4)).to(Config.device)
    optimizer = optim.Adam(net.parameters(), lr=Config.learning_rate)
    snrs = [int(s) for s in args.multiple_snr.split(",")]
    for step in range(1000):
        images = torch.rand(Config.batch_size, 3, 32, 32, device=Config.device)
        snr = snrs[step % len(snrs)]
        recon = net[2](awgn(net[1](net[0](images)), snr))
        loss = nn.functional.mse_loss(recon, images)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
