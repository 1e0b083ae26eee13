import os

import torch
from catalyst.data.sampler import BalanceClassSampler, DistributedSamplerWrapper
from torch.utils.data import DataLoader, TensorDataset

os.environ["CUDA_VISIBLE_DEVICES"] = "0"

features = torch.randn(10_000, 64)
labels = torch.randint(0, 4, (10_000,))
dataset = TensorDataset(features, labels)

sampler = BalanceClassSampler(labels.tolist(), mode="upsampling")
if torch.cuda.device_count() > 1:
    sampler = DistributedSamplerWrapper(sampler)
loader = DataLoader(dataset, batch_size=128, sampler=sampler)

model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 4)).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for x, y in loader:
    loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
