"""SDXL fine-tuning, one process per GPU under accelerate launch."""
import argparse

import torch
from accelerate import Accelerator
from diffusers import StableDiffusionXLPipeline


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--pretrained_model_name_or_path", required=True)
    p.add_argument("--instance_data_dir", required=True)
    p.add_argument("--resolution", type=int, default=1024)
    p.add_argument("--train_batch_size", type=int, default=1)
    p.add_argument("--learning_rate", type=float, default=4e-7)
    p.add_argument("--output_dir", required=True)
    return p.parse_args()


def main():
    args = parse_args()
    accelerator = Accelerator()
    pipe = StableDiffusionXLPipeline.from_pretrained(args.pretrained_model_name_or_path, torch_dtype=torch.bfloat16)
    unet = pipe.unet.to(accelerator.device)
    optimizer = torch.optim.AdamW(unet.parameters(), lr=args.learning_rate)
    unet, optimizer = accelerator.prepare(unet, optimizer)
    accelerator.print(f"training on {accelerator.num_processes} processes")


if __name__ == "__main__":
    main()
