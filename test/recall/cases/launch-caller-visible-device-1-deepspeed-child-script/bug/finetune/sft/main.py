"""Supervised fine-tuning step run by the deepspeed launcher (one process per GPU it selects)."""
import argparse

import deepspeed
import torch
from transformers import AutoModelForCausalLM


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name_or_path", required=True)
    parser.add_argument("--local_rank", type=int, default=-1)
    parser = deepspeed.add_config_arguments(parser)
    args, _ = parser.parse_known_args()

    torch.cuda.set_device(args.local_rank)
    deepspeed.init_distributed()
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path, torch_dtype=torch.bfloat16)
    engine, *_ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
    engine.train()


if __name__ == "__main__":
    main()
