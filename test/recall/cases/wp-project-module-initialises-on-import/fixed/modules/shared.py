import torch

from modules import devices

models_path = "models"
device = devices.get_optimal_device()

# The checkpoint is loaded when this module is first imported.
sd_model = torch.nn.Sequential(torch.nn.Conv2d(4, 64, 3, padding=1), torch.nn.SiLU()).to(device)
sd_model.eval()
