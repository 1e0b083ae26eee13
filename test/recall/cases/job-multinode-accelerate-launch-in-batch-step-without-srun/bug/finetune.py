import argparse

import torch
from accelerate import Accelerator
from transformers import AutoModelForCausalLM


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()

    accelerator = Accelerator()
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.bfloat16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    model, optimizer = accelerator.prepare(model, optimizer)
    accelerator.print(f"{accelerator.num_processes} processes, this one on {accelerator.device}")


if __name__ == "__main__":
    main()
