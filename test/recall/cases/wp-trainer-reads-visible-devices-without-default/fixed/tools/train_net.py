"""Train a reconstruction model: python tools/train_net.py --device cuda --iters 1000"""
import argparse
from types import SimpleNamespace

from meddlr.engine.trainer import DefaultTrainer


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--iters", type=int, default=1000)
    parser.add_argument("--lr", type=float, default=1e-3)
    return parser.parse_args()


if __name__ == "__main__":
    args = parse_args()
    cfg = SimpleNamespace(
        MODEL=SimpleNamespace(DEVICE=args.device, CHANNELS=32),
        SOLVER=SimpleNamespace(BASE_LR=args.lr, MAX_ITER=args.iters, BATCH_SIZE=4),
    )
    DefaultTrainer(cfg).train()
