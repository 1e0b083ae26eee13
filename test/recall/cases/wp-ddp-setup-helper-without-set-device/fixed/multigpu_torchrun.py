"""Toy DDP training, one process per GPU, started by torchrun."""
import os
import sys

import torch
import torch.nn.functional as F
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def ddp_setup():
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    init_process_group(backend="nccl")


class Trainer:
    def __init__(self, model, train_data, optimizer):
        self.gpu_id = int(os.environ["LOCAL_RANK"])
        self.model = DDP(model.to(self.gpu_id), device_ids=[self.gpu_id])
        self.train_data = train_data
        self.optimizer = optimizer

    def train(self, epochs):
        for epoch in range(epochs):
            self.train_data.sampler.set_epoch(epoch)
            for x, y in self.train_data:
                x, y = x.to(self.gpu_id), y.to(self.gpu_id)
                self.optimizer.zero_grad()
                F.mse_loss(self.model(x), y).backward()
                self.optimizer.step()


def main(epochs, batch_size):
    ddp_setup()
    data = TensorDataset(torch.randn(2048, 20), torch.randn(2048, 1))
    loader = DataLoader(data, batch_size=batch_size, sampler=DistributedSampler(data))
    model = torch.nn.Linear(20, 1)
    trainer = Trainer(model, loader, torch.optim.SGD(model.parameters(), lr=1e-3))
    trainer.train(epochs)
    destroy_process_group()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
