"""LoRA training of a video diffusion model with DeepSpeed pipeline parallelism."""
import argparse
import json
import os

import deepspeed
import torch
from deepspeed import comm as dist

parser = argparse.ArgumentParser()
parser.add_argument("--config", required=True, help="training settings (JSON)")
parser.add_argument("--local_rank", type=int, default=-1, help="set by the deepspeed launcher")
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()


def build_model(config):
    layers = [torch.nn.Linear(config["hidden"], config["hidden"]) for _ in range(config["layers"])]
    return deepspeed.pipe.PipelineModule(layers=layers, num_stages=config.get("pipeline_stages", 1))


if __name__ == "__main__":
    with open(args.config) as f:
        config = json.load(f)

    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "29500")

    deepspeed.init_distributed()

    # the dataset code broadcasts a multiprocessing queue: give each process its GPU first
    torch.cuda.set_device(dist.get_local_rank())

    model = build_model(config)
    engine, _, _, _ = deepspeed.initialize(
        args=args,
        model=model,
        model_parameters=[p for p in model.parameters() if p.requires_grad],
        config={"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 4},
    )
    print(f"rank {dist.get_rank()} ready on cuda:{torch.cuda.current_device()}")
