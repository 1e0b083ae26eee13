import argparse
import os

# Parse the GPU choice first: CUDA_VISIBLE_DEVICES must be set before torch
# (or anything importing it) is loaded.
parser = argparse.ArgumentParser()
parser.add_argument("--gpu", type=int, default=0, help="choose which GPU to use if you have multiple")
parser.add_argument("--ckpt", default="models/ldm/stable-diffusion-v1/model.ckpt")
parser.add_argument("--config", default="configs/stable-diffusion/v1-inference.yaml")
opt = parser.parse_args()

os.environ["CUDA_VISIBLE_DEVICES"] = str(opt.gpu)

import torch
from omegaconf import OmegaConf

from ldm.util import instantiate_from_config

DEVICE = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


def load_model(config_path, ckpt_path):
    config = OmegaConf.load(config_path)
    model = instantiate_from_config(config.model)
    state = torch.load(ckpt_path, map_location="cpu")["state_dict"]
    model.load_state_dict(state, strict=False)
    return model.half().eval()


model = load_model(opt.config, opt.ckpt).to(DEVICE)
print("loaded on", torch.cuda.get_device_name(0))
