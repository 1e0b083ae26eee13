import os

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class TinySegmenter(L.LightningModule):
    def __init__(self, classes: int = 4):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, classes, 1)
        )

    def training_step(self, batch, batch_idx):
        images, masks = batch
        loss = nn.functional.cross_entropy(self.body(images), masks)
        self.log("loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05, momentum=0.9)


def main():
    print(f"SLURM_NTASKS={os.environ.get('SLURM_NTASKS')} per node={os.environ.get('SLURM_NTASKS_PER_NODE')}")
    images = torch.randn(512, 3, 64, 64)
    masks = torch.randint(0, 4, (512, 64, 64))
    loader = DataLoader(TensorDataset(images, masks), batch_size=16)
    trainer = L.Trainer(max_epochs=50)
    print(f"devices seen by the trainer: {trainer.num_devices}")
    trainer.fit(TinySegmenter(), loader)


if __name__ == "__main__":
    main()
