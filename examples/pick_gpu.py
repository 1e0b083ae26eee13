"""Picks a GPU after importing torch and diffusers: works only while diffusers's import leaves CUDA alone.

PyTorch initialises CUDA lazily (measured), so an assignment after `import torch` still takes
effect -- unless something imported or called before it initialises CUDA. diffusers is a GPU
library whose import nobody has measured, so GPU Pilot reports GPU002 (information) naming it and,
in the editor, offers to move the assignment above the imports. With preview on
(`gpuPilot.lint.preview`), GPU002 also reports the same write after `import torch` alone.
"""
import os
import sys

import torch
from diffusers import DDPMPipeline

gpu = sys.argv[1] if len(sys.argv) > 1 else "0"
os.environ["CUDA_VISIBLE_DEVICES"] = gpu

pipe = DDPMPipeline.from_pretrained("google/ddpm-cifar10-32").to("cuda")
image = pipe(num_inference_steps=25).images[0]
print("running on", torch.cuda.get_device_name(0), "image", image.size)
