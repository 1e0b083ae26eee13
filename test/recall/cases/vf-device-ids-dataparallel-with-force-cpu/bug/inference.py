import argparse

import torch
import torch.nn as nn


class Separator(nn.Module):
    def __init__(self, channels=2, stems=4):
        super().__init__()
        self.stems = stems
        self.net = nn.Conv1d(channels, channels * stems, kernel_size=9, padding=4)

    def forward(self, mix):
        return self.net(mix).view(mix.shape[0], self.stems, -1, mix.shape[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device_ids", nargs="+", type=int, default=0, help="list of gpu ids")
    parser.add_argument("--force_cpu", action="store_true", help="run on the CPU even if CUDA is available")
    args = parser.parse_args()

    device_ids = args.device_ids
    if args.force_cpu or not torch.cuda.is_available():
        device = "cpu"
    elif isinstance(device_ids, int):
        device = f"cuda:{device_ids}"
    else:
        device = f"cuda:{device_ids[0]}"

    model = Separator().to(device)
    if isinstance(device_ids, list):
        model = nn.DataParallel(model, device_ids=device_ids)

    mix = torch.randn(1, 2, 44100)
    with torch.no_grad():
        stems = model(mix.to(device))
    print(stems.shape)


if __name__ == "__main__":
    main()
