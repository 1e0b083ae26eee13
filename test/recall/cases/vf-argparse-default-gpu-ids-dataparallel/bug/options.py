import argparse

import torch


class TrainOptions:
    """Command-line options of the font style-transfer GAN."""

    def __init__(self):
        self.parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)
        self.parser.add_argument("--dataroot", required=True, help="folder with the rendered glyphs")
        self.parser.add_argument("--name", default="font_gan", help="name of the experiment")
        self.parser.add_argument("--gpu_ids", type=str, default="0,1", help="GPU ids, e.g. 0 or 0,1,2; -1 for CPU")
        self.parser.add_argument("--batch_size", type=int, default=256)
        self.parser.add_argument("--ngf", type=int, default=64)
        self.parser.add_argument("--lr", type=float, default=2e-4)
        self.parser.add_argument("--n_epochs", type=int, default=20)

    def parse(self):
        opt = self.parser.parse_args()
        ids = []
        for token in opt.gpu_ids.split(","):
            gpu = int(token)
            if gpu >= 0:
                ids.append(gpu)
        opt.gpu_ids = ids
        if len(opt.gpu_ids) > 0:
            torch.cuda.set_device(opt.gpu_ids[0])
        for key, value in sorted(vars(opt).items()):
            print(f"{key:>16}: {value}")
        return opt
