import fire
import torch
import yaml

from train import train


def load_cfg(path, **overrides):
    with open(path) as f:
        cfg = yaml.safe_load(f)
    cfg.update(overrides)
    return cfg


def check_hardware(cfg):
    if cfg.get("bf16") and not torch.cuda.is_bf16_supported():
        raise ValueError("bf16 requested but this GPU does not support it")


def main(config="config.yml", **kwargs):
    cfg = load_cfg(config, **kwargs)
    check_hardware(cfg)
    train(cfg)


if __name__ == "__main__":
    fire.Fire(main)
