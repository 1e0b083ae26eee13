"""Device helpers for the detector's train and val scripts."""
import os

import torch


def select_device(device="", batch_size=0):
    """Pick the device from --device: 'cpu', '0' or '0,1,2,3'."""
    device = str(device).strip().lower().replace("cuda:", "")
    cpu = device == "cpu"
    if cpu:
        os.environ["CUDA_VISIBLE_DEVICES"] = "-1"  # make torch.cuda.is_available() False
    elif device:
        count = torch.cuda.device_count()
        assert torch.cuda.is_available(), "CUDA is not available, use --device cpu"
        assert count > int(max(device.split(","))), f"invalid --device {device}, valid devices are 0 - {count - 1}"
        os.environ["CUDA_VISIBLE_DEVICES"] = device  # after the checks

    cuda = not cpu and torch.cuda.is_available()
    if cuda:
        n = len(device.split(",")) if device else 1
        if n > 1 and batch_size > 0:
            assert batch_size % n == 0, f"batch size {batch_size} is not a multiple of GPU count {n}"
    return torch.device("cuda:0" if cuda else "cpu")
