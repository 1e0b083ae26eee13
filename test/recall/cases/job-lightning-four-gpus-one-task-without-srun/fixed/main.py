"""Face recognition training (margin-based softmax) with PyTorch Lightning."""
import argparse

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class FaceTrainer(pl.LightningModule):
    def __init__(self, num_classes=10572, embedding=512, lr=0.1):
        super().__init__()
        self.save_hyperparameters()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 64, 3, stride=2, padding=1), nn.BatchNorm2d(64), nn.PReLU(64),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, embedding),
        )
        self.head = nn.Linear(embedding, num_classes, bias=False)

    def training_step(self, batch, batch_idx):
        images, labels = batch
        logits = self.head(F.normalize(self.backbone(images)))
        loss = F.cross_entropy(64.0 * logits, labels)
        self.log("train_loss", loss, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9)


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_root", default="./data")
    parser.add_argument("--train_data_path", default="faces_webface_112x112")
    parser.add_argument("--prefix", default="default")
    parser.add_argument("--gpus", type=int, default=1, help="number of GPUs to train on")
    parser.add_argument("--distributed_backend", default="ddp")
    parser.add_argument("--arch", default="ir_50")
    parser.add_argument("--batch_size", type=int, default=256)
    parser.add_argument("--num_workers", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=26)
    parser.add_argument("--lr", type=float, default=0.1)
    return parser.parse_args()


def main():
    args = get_args()
    # each DDP process gets its share of the global batch
    per_gpu_batch = args.batch_size // max(1, args.gpus)
    images = torch.rand(2048, 3, 112, 112)
    labels = torch.randint(0, 10572, (2048,))
    loader = DataLoader(TensorDataset(images, labels), batch_size=per_gpu_batch,
                        num_workers=args.num_workers, shuffle=True)
    trainer = pl.Trainer(
        accelerator="gpu",
        devices=args.gpus,
        strategy=args.distributed_backend,
        max_epochs=args.epochs,
        default_root_dir=f"experiments/{args.prefix}",
    )
    trainer.fit(FaceTrainer(lr=args.lr), loader)


if __name__ == "__main__":
    main()
