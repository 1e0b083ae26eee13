import os

import torch
import torch.nn as nn

# GPU 0 is busy with another job: train on the second card (PCI order, as nvidia-smi lists it).
os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
os.environ["CUDA_VISIBLE_DEVICES"] = "1"

for i in range(torch.cuda.device_count()):
    props = torch.cuda.get_device_properties(i)
    print(f"cuda:{i} {props.name} {props.total_memory // 2**20} MiB")

device = torch.device("cuda:0")
model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 10)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

for step in range(200):
    x = torch.randn(256, 512, device=device)
    y = torch.randint(0, 10, (256,), device=device)
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
