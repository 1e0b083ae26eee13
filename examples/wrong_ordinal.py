"""Hides all GPUs but physical GPU 1, then asks for cuda:1.

After CUDA_VISIBLE_DEVICES="1" the only visible device is renumbered cuda:0, so `cuda:1` raises
"invalid device ordinal". GPU Pilot reports GPU004 and offers cuda:0.
"""
import os

os.environ["CUDA_VISIBLE_DEVICES"] = "1"

import torch  # noqa: E402

model = torch.nn.Linear(16, 16).to("cuda:1")
print(model.weight.device)
