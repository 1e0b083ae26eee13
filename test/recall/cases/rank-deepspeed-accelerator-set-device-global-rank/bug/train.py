"""Entry point, started with `deepspeed --hostfile hosts train.py config.yaml` on every node."""
import sys

import yaml

from trainer_config import TrainerConfig


def main(path):
    with open(path) as f:
        config = TrainerConfig(**yaml.safe_load(f))
    if config.global_rank == 0:
        print(f"training {config.model_name_or_path} on {config.world_size} processes")


if __name__ == "__main__":
    main(sys.argv[1])
