import torch
from torch import nn

net = nn.Sequential(nn.Linear(8, 8), nn.ReLU()).cuda()
net = nn.DataParallel(net, device_ids=[2, 3])
