import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import torch
import torch.nn as nn

model = nn.Linear(8, 8).cuda()  # cuda:0
dp = nn.DataParallel(model, device_ids=[1, 0])
y = dp(torch.ones(4, 8).cuda())
