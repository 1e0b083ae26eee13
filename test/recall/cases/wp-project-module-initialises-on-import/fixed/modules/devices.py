import torch


def get_optimal_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")
