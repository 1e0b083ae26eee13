import argparse

import torch
import torch.nn as nn


class Detector(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.ReLU())
        self.head = nn.Conv2d(32, num_classes + 5, 1)

    def forward(self, x):
        return self.head(self.backbone(x))


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrained_path", default="checkpoints/detector_epoch_300.pth")
    parser.add_argument("--gpu_idx", type=int, default=0)
    return parser.parse_args()


def main():
    configs = parse_args()
    device = torch.device(f"cuda:{configs.gpu_idx}" if torch.cuda.is_available() else "cpu")
    model = Detector()
    # the released checkpoint was saved from the authors' training GPU
    model.load_state_dict(torch.load(configs.pretrained_path, map_location=device))
    model = model.to(device).eval()
    with torch.no_grad():
        bev = torch.rand(1, 3, 608, 608, device=device)
        print(model(bev).shape)


if __name__ == "__main__":
    main()
