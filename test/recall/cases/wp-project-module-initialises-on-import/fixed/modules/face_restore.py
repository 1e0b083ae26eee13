import os

import torch


def setup_model(models_path):
    path = os.path.join(models_path, "codeformer.pth")
    if os.path.exists(path):
        return torch.load(path, map_location="cuda")
    return None
