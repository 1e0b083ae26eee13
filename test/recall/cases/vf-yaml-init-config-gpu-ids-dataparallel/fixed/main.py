import argparse

import torch
import yaml

from server import Server


def main():
    parser = argparse.ArgumentParser(description="FedAvg on MNIST")
    parser.add_argument("--config", default="config.yaml")
    args = parser.parse_args()

    with open(args.config) as handle:
        configs = yaml.safe_load(handle)

    torch.manual_seed(configs["global_config"]["seed"])

    server = Server(
        model_config=configs["model_config"],
        init_config=configs["init_config"],
        fed_config=configs["fed_config"],
        optim_config=configs["optim_config"],
    )
    server.setup()
    server.fit()


if __name__ == "__main__":
    main()
