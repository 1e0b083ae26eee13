"""Fine-tunes a small model on "the second GPU" -- but the GPU is chosen too late.

torch.cuda.is_available() initialises CUDA, and CUDA reads CUDA_VISIBLE_DEVICES exactly once, at
initialisation. The assignment below is silently ignored: the job lands on GPU 0, next to whatever
else is running there. GPU Pilot reports GPU001 and offers to move the assignment above `import torch`.
"""
import os

import torch
from torch import nn

if not torch.cuda.is_available():
    raise SystemExit("this script needs a GPU")

os.environ["CUDA_VISIBLE_DEVICES"] = "1"  # meant to put the job on the second GPU

device = torch.device("cuda")
model = nn.Linear(1024, 1024).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.01)

for step in range(100):
    x = torch.randn(256, 1024, device=device)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

print("trained on", torch.cuda.get_device_name(device))
