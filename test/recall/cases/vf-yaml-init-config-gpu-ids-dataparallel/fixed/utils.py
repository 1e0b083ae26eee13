import torch
import torch.nn as nn
from torch.nn import init


def init_weights(model, init_type="normal", init_gain=0.02):
    def apply_init(module):
        name = module.__class__.__name__
        if hasattr(module, "weight") and ("Conv" in name or "Linear" in name):
            if init_type == "normal":
                init.normal_(module.weight.data, 0.0, init_gain)
            elif init_type == "xavier":
                init.xavier_normal_(module.weight.data, gain=init_gain)
            elif init_type == "kaiming":
                init.kaiming_normal_(module.weight.data, a=0, mode="fan_in")
            else:
                raise NotImplementedError(f"unknown init_type {init_type}")
            if module.bias is not None:
                init.constant_(module.bias.data, 0.0)

    model.apply(apply_init)


def initialize_model(model, init_type, init_gain, gpu_ids):
    """Move the model to the listed GPUs (DataParallel) and initialise its weights."""
    if len(gpu_ids) > 0:
        assert torch.cuda.is_available()
        model.to(gpu_ids[0])
        model = nn.DataParallel(model, gpu_ids)
    init_weights(model, init_type, init_gain)
    return model
