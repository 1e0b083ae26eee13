import os
import torch

visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0")
torch.cuda.set_device(int(visible))
