"""Train and evaluate a ResNet-18 baseline on one of the MedMNIST 2D datasets."""
import argparse

import torch
import torch.nn as nn
import torch.utils.data as data
import torchvision.transforms as transforms
from torchvision.models import resnet18

import medmnist
from medmnist import INFO


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for inputs, targets in loader:
            outputs = model(inputs.to(device))
            correct += (outputs.argmax(1).cpu() == targets.squeeze(1)).sum().item()
            total += targets.shape[0]
    return correct / total


def main(data_flag, num_epochs, gpu_ids, batch_size):
    info = INFO[data_flag]
    n_classes = len(info["label"])
    DataClass = getattr(medmnist, info["python_class"])

    str_ids = gpu_ids.split(",")
    gpu_ids = []
    for str_id in str_ids:
        gid = int(str_id)
        if gid >= 0:
            gpu_ids.append(gid)
    # pick the GPU by its ordinal; CUDA_VISIBLE_DEVICES stays as the shell set it
    device = torch.device("cuda:{}".format(gpu_ids[0])) if gpu_ids else torch.device("cpu")

    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize(mean=[0.5], std=[0.5])])
    train_set = DataClass(split="train", transform=transform, download=True, as_rgb=True)
    test_set = DataClass(split="test", transform=transform, download=True, as_rgb=True)
    train_loader = data.DataLoader(train_set, batch_size=batch_size, shuffle=True)
    test_loader = data.DataLoader(test_set, batch_size=batch_size)

    model = resnet18(num_classes=n_classes).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(num_epochs):
        model.train()
        for inputs, targets in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(inputs.to(device)), targets.squeeze(1).long().to(device))
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: test accuracy {evaluate(model, test_loader, device):.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="MedMNIST 2D baseline")
    parser.add_argument("--data_flag", default="pathmnist", type=str)
    parser.add_argument("--num_epochs", default=100, type=int)
    parser.add_argument("--gpu_ids", default="0", type=str)
    parser.add_argument("--batch_size", default=128, type=int)
    args = parser.parse_args()
    main(args.data_flag, args.num_epochs, args.gpu_ids, args.batch_size)
