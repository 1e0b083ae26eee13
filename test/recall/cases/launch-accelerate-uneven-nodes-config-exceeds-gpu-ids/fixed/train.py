"""Image classifier training across two machines with Accelerate."""
import argparse

import torch
import torch.nn as nn
import torchvision
from accelerate import Accelerator
from torch.utils.data import DataLoader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()

    accelerator = Accelerator()
    print(f"process {accelerator.process_index}/{accelerator.num_processes} "
          f"(local {accelerator.local_process_index}) on {accelerator.device}")

    transform = torchvision.transforms.Compose([
        torchvision.transforms.Resize(224),
        torchvision.transforms.ToTensor(),
    ])
    data = torchvision.datasets.CIFAR10("data", train=True, download=True, transform=transform)
    loader = DataLoader(data, batch_size=64, shuffle=True, num_workers=4)
    model = torchvision.models.resnet50(num_classes=10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        for images, labels in loader:
            loss = loss_fn(model(images), labels)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        accelerator.print(f"epoch {epoch}: loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
