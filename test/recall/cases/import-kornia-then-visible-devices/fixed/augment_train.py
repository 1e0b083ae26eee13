import os

os.environ["CUDA_VISIBLE_DEVICES"] = "3"

import kornia
import kornia.augmentation as K
import torch
import torchvision

augment = torch.nn.Sequential(
    K.RandomHorizontalFlip(),
    K.ColorJitter(0.2, 0.2, 0.2, 0.05, p=0.8),
    K.RandomResizedCrop((224, 224)),
)
model = torchvision.models.resnet18(num_classes=10).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

print(kornia.__version__, "GPUs seen:", torch.cuda.device_count())
for step in range(100):
    images = torch.rand(32, 3, 256, 256, device="cuda")
    labels = torch.randint(0, 10, (32,), device="cuda")
    loss = torch.nn.functional.cross_entropy(model(augment(images)), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
