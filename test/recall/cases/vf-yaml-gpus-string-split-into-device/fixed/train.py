import argparse

import torch

from config import config, update_config
from detector import HumanDetectionNet


def main():
    parser = argparse.ArgumentParser(description="Train the voxel human detector")
    parser.add_argument("--cfg", required=True, help="experiment config file")
    args = parser.parse_args()
    update_config(args.cfg)

    gpus = [int(i) for i in config.GPUS.split(",")]
    model = HumanDetectionNet(config)
    model = torch.nn.DataParallel(model.cuda(), device_ids=gpus)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.TRAIN.LR)

    for epoch in range(config.TRAIN.END_EPOCH):
        cubes = torch.rand(config.TRAIN.BATCH_SIZE, 15, 80, 80, 20)
        scores, _ = model(cubes)
        loss = (1.0 - scores).clamp(min=0).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
