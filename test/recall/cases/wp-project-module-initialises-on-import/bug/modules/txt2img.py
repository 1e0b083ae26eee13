import torch

from modules import shared


def txt2img(seed=0):
    generator = torch.Generator(device=shared.device).manual_seed(seed)
    latent = torch.randn(1, 4, 64, 64, generator=generator, device=shared.device)
    with torch.no_grad():
        return shared.sd_model(latent)


def serve():
    print(txt2img().shape)
