import argparse

import deepspeed
import torch
from transformers import AutoModelForCausalLM


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--model_name_or_path", required=True)
    parser.add_argument("--dataset", default="train_mix")
    parser.add_argument("--finetuning_type", default="lora")
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--per_device_train_batch_size", type=int, default=4)
    parser.add_argument("--num_train_epochs", type=int, default=1)
    parser.add_argument("--fp16", action="store_true")
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()

    torch.cuda.set_device(args.local_rank)
    deepspeed.init_distributed()
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
    engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
    print("rank", torch.distributed.get_rank(), "on", engine.device)


if __name__ == "__main__":
    main()
