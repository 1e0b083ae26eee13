import argparse

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("config")
    parser.add_argument("--work-dir", default="work_dirs/default")
    args = parser.parse_args()

    device = torch.device("cuda")
    print(f"training {args.config} on {torch.cuda.get_device_name(device)}, saving to {args.work_dir}")
    model = torch.nn.Conv2d(3, 3, 3, padding=1).to(device)
    frames = torch.randn(2, 3, 64, 64, device=device)
    loss = model(frames).abs().mean()
    loss.backward()


if __name__ == "__main__":
    main()
