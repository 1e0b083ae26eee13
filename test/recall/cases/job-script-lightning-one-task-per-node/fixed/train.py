import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Regressor(L.LightningModule):
    def __init__(self, width: int = 128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, width), nn.GELU(), nn.Linear(width, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=3e-4)


def main():
    features = torch.randn(16384, 32)
    targets = features.sum(dim=1, keepdim=True)
    loader = DataLoader(TensorDataset(features, targets), batch_size=128, num_workers=4)
    trainer = L.Trainer(accelerator="gpu", devices=8, num_nodes=2, strategy="ddp", max_epochs=5)
    trainer.fit(Regressor(), loader)


if __name__ == "__main__":
    main()
