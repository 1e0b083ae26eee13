import argparse


class Options:
    def __init__(self, is_train=True):
        self.is_train = is_train
        self.train = {}

    def parse(self):
        parser = argparse.ArgumentParser()
        parser.add_argument("--gpus", type=int, nargs="+", default=[1], help="physical GPU ids to train on")
        parser.add_argument("--epochs", type=int, default=100)
        parser.add_argument("--lr", type=float, default=1e-3)
        args = parser.parse_args()
        self.train = {"gpus": args.gpus, "epochs": args.epochs, "lr": args.lr, "seed": 2022}
