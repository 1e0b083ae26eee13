"""Train or evaluate an ImageNet classifier with shape-texture debiased augmentation."""
import argparse
import os
import random

import torch
import torch.nn as nn
import torch.utils.data as data
import torchvision.datasets as datasets
import torchvision.models as models
import torchvision.transforms as transforms

parser = argparse.ArgumentParser(description="PyTorch ImageNet Training")
parser.add_argument("-d", "--data", default="path to dataset", type=str)
parser.add_argument("-a", "--arch", default="resnet50", choices=sorted(models.list_models()))
parser.add_argument("--train-batch", default=256, type=int)
parser.add_argument("--evaluate", action="store_true")
parser.add_argument("--load", default="", type=str, help="checkpoint to evaluate")
parser.add_argument("--manualSeed", type=int, help="manual seed")
parser.add_argument("--gpu-id", default="7", type=str, help="id(s) for CUDA_VISIBLE_DEVICES")
args = parser.parse_args()

# Use CUDA
os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id
use_cuda = torch.cuda.is_available()
if args.manualSeed is None:
    args.manualSeed = random.randint(1, 10000)
torch.manual_seed(args.manualSeed)
if use_cuda:
    torch.cuda.manual_seed_all(args.manualSeed)


def main():
    model = torch.nn.DataParallel(models.__dict__[args.arch]()).cuda()
    if args.load:
        model.load_state_dict(torch.load(args.load, map_location="cpu")["state_dict"])
    criterion = nn.CrossEntropyLoss().cuda()
    val_tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor()])
    loader = data.DataLoader(datasets.ImageFolder(os.path.join(args.data, "val"), val_tf),
                             batch_size=args.train_batch, num_workers=8)
    model.eval()
    correct, total, loss = 0, 0, 0.0
    with torch.no_grad():
        for images, targets in loader:
            images, targets = images.cuda(), targets.cuda(non_blocking=True)
            outputs = model(images)
            loss += criterion(outputs, targets).item() * len(targets)
            correct += (outputs.argmax(1) == targets).sum().item()
            total += len(targets)
    print(f"top-1 {100.0 * correct / total:.2f}  loss {loss / total:.4f}")


if __name__ == "__main__":
    main()
