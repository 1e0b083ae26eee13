import os
import random

import numpy as np
import torch
import torch.nn as nn


class NetworkTrainer:
    def __init__(self, opt):
        self.opt = opt

    def set_gpu_device(self):
        os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in self.opt.train["gpus"])

    def set_seed(self):
        seed = self.opt.train["seed"]
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)

    def set_network(self):
        net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 2, 1))
        self.net = nn.DataParallel(net).cuda()
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=self.opt.train["lr"])

    def run(self):
        for epoch in range(self.opt.train["epochs"]):
            images = torch.rand(8, 3, 128, 128).cuda()
            masks = torch.randint(0, 2, (8, 128, 128)).cuda()
            loss = nn.functional.cross_entropy(self.net(images), masks)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
