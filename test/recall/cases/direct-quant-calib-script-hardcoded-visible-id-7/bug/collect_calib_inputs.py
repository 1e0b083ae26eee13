# Gathers the denoiser's inputs over a few DDIM runs; they become the calibration set for quantization.
import sys
sys.path.append(".")
import os
os.environ["CUDA_VISIBLE_DEVICES"] = "7"

import numpy as np
import torch
from omegaconf import OmegaConf

from ldm.models.diffusion.ddim import DDIMSampler
from ldm.util import instantiate_from_config


def load_model(config_path, ckpt_path):
    config = OmegaConf.load(config_path)
    model = instantiate_from_config(config.model)
    state = torch.load(ckpt_path, map_location="cpu")["state_dict"]
    model.load_state_dict(state, strict=False)
    return model.cuda().eval()


if __name__ == "__main__":
    model = load_model("configs/latent-diffusion/cin256-v2.yaml", "models/ldm/cin256-v2/model.ckpt")
    sampler = DDIMSampler(model)
    classes = np.random.choice(1000, size=32, replace=False)
    inputs = []
    with torch.no_grad(), model.ema_scope():
        uncond = model.get_learned_conditioning({model.cond_stage_key: torch.tensor(8 * [1000]).cuda()})
        for c in classes:
            cond = model.get_learned_conditioning({model.cond_stage_key: torch.tensor(8 * [int(c)]).cuda()})
            _, trace = sampler.sample(S=100, conditioning=cond, batch_size=8, shape=[3, 64, 64],
                                      unconditional_guidance_scale=3.0, unconditional_conditioning=uncond,
                                      eta=0.0, verbose=False, log_every_t=1)
            inputs.append([x.cpu() for x in trace["x_inter"]])
    torch.save(inputs, "calib/imagenet_input_100steps.pth")
