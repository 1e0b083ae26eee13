import torch

from modules import shared


def img2img(latent, strength=0.75):
    noise = torch.randn_like(latent) * strength
    with torch.no_grad():
        return shared.sd_model(latent.to(shared.device) + noise.to(shared.device))
