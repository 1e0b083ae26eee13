"""Train a pose-estimation network with PyTorch Lightning on the GPUs named in the config."""
import hydra
import lightning.pytorch as pl
import torch
from omegaconf import DictConfig
from torch import nn


class HeatmapModel(pl.LightningModule):
    def __init__(self, num_keypoints: int, lr: float):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(32, num_keypoints, 1))
        self.lr = lr

    def training_step(self, batch, batch_idx):
        images, heatmaps = batch
        loss = nn.functional.mse_loss(self.net(images), heatmaps)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


@hydra.main(version_base=None)
def train(cfg: DictConfig) -> None:
    model = HeatmapModel(cfg.data.num_keypoints, cfg.training.lr)
    data = hydra.utils.instantiate(cfg.data.module)
    trainer = pl.Trainer(
        accelerator="gpu",
        devices=cfg.training.num_gpus,
        strategy="ddp",
        max_epochs=cfg.training.max_epochs,
    )
    trainer.fit(model, datamodule=data)


if __name__ == "__main__":
    train()
