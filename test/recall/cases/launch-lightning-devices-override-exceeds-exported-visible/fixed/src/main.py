"""Fine-tune or linearly probe a foundation model on a remote-sensing benchmark (Hydra + Lightning)."""
import hydra
import lightning as L
import torch
from omegaconf import DictConfig
from torch.utils.data import DataLoader, TensorDataset


class Classifier(L.LightningModule):
    def __init__(self, n_classes, lr):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(13 * 64 * 64, n_classes))
        self.lr = lr

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.cross_entropy(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)


@hydra.main(version_base=None, config_path="../configs", config_name="config")
def main(cfg: DictConfig):
    L.seed_everything(cfg.seed)
    data = TensorDataset(torch.randn(512, 13, 64, 64), torch.randint(0, 10, (512,)))
    loader = DataLoader(data, batch_size=32, num_workers=cfg.num_workers)
    trainer = L.Trainer(
        accelerator="gpu",
        devices=cfg.num_gpus,
        strategy="ddp" if cfg.num_gpus > 1 else "auto",
        max_epochs=cfg.epochs,
        default_root_dir=cfg.output_dir,
    )
    trainer.fit(Classifier(10, cfg.lr), loader)


if __name__ == "__main__":
    main()
