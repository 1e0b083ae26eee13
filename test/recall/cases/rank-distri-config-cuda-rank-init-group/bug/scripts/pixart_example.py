"""Generate one image with PixArt-alpha split across the GPUs of the run."""
import argparse

import torch
from diffusers import PixArtAlphaPipeline

from pipefuser import DistriConfig


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_id", default="PixArt-alpha/PixArt-XL-2-1024-MS")
    parser.add_argument("--prompt", default="An astronaut riding a horse on the moon")
    parser.add_argument("--height", type=int, default=1024)
    parser.add_argument("--width", type=int, default=1024)
    args = parser.parse_args()

    config = DistriConfig(height=args.height, width=args.width)
    pipe = PixArtAlphaPipeline.from_pretrained(args.model_id, torch_dtype=torch.float16).to(config.device)
    image = pipe(args.prompt, height=args.height, width=args.width).images[0]
    if config.is_main():
        image.save("result.png")


if __name__ == "__main__":
    main()
