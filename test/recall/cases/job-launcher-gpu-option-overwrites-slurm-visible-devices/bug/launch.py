"""Train a text-to-3D system from a YAML config."""
import argparse
import os


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--gpu", default="0", help="GPU(s) to use, e.g. 0 or 0,1")
    parser.add_argument("--train", action="store_true")
    args = parser.parse_args()

    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
    n_gpus = len(args.gpu.split(","))

    import pytorch_lightning as pl
    import torch

    model = torch.nn.Linear(16, 16)
    trainer = pl.Trainer(accelerator="gpu", devices=n_gpus, max_steps=10000)
    print(f"training {args.config} on {n_gpus} GPU(s)")


if __name__ == "__main__":
    main()
