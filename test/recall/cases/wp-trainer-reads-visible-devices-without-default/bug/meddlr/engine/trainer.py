import logging
import os

import torch
from torch.nn import DataParallel

logger = logging.getLogger(__name__)


class SimpleTrainer:
    def __init__(self, model, data_loader, optimizer, max_iter):
        self.model = model
        self.data_loader = data_loader
        self.optimizer = optimizer
        self.max_iter = max_iter

    def train(self):
        device = next(self.model.parameters()).device
        self.model.train()
        for it, (kspace, target) in zip(range(self.max_iter), self.data_loader):
            loss = torch.nn.functional.l1_loss(self.model(kspace.to(device)), target.to(device))
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            if it % 100 == 0:
                logger.info("iter %d loss %.4f", it, loss.item())


class DefaultTrainer(SimpleTrainer):
    def __init__(self, cfg):
        model = self.build_model(cfg)
        optimizer = torch.optim.Adam(model.parameters(), lr=cfg.SOLVER.BASE_LR)

        # Wrap with DataParallel for training only; inference runs on one device.
        num_gpus = len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))
        if num_gpus > 1:
            logger.info("Using data parallel over %d GPUs", num_gpus)
            model = DataParallel(model)
        model = model.to(cfg.MODEL.DEVICE)
        super().__init__(model, self.build_train_loader(cfg), optimizer, cfg.SOLVER.MAX_ITER)

    @staticmethod
    def build_model(cfg):
        c = cfg.MODEL.CHANNELS
        return torch.nn.Sequential(
            torch.nn.Conv2d(2, c, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(c, 2, 3, padding=1)
        )

    @staticmethod
    def build_train_loader(cfg):
        data = torch.utils.data.TensorDataset(torch.randn(64, 2, 128, 128), torch.randn(64, 2, 128, 128))
        return torch.utils.data.DataLoader(data, batch_size=cfg.SOLVER.BATCH_SIZE, shuffle=True)
