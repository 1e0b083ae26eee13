import os

import torch
import torchvision

# This job gets the first GPU; the other cards run a separate experiment.
os.environ["CUDA_VISIBLE_DEVICES"] = "0"

n_gpus = torch.cuda.device_count()
print("training on", n_gpus, "GPU(s)")

model = torchvision.models.resnet18(num_classes=10).cuda()
if n_gpus > 1:
    model = torch.nn.DataParallel(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

for step in range(100):
    images = torch.randn(64 * n_gpus, 3, 224, 224, device="cuda")
    labels = torch.randint(0, 10, (64 * n_gpus,), device="cuda")
    loss = torch.nn.functional.cross_entropy(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
