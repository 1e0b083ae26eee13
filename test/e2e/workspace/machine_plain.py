import torch

x = torch.ones(4, device="cuda:0")
