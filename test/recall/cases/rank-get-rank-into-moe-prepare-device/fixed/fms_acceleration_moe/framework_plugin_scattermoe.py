"""Plugin that swaps a mixture-of-experts model's expert layers for ScatterMoE modules.

It runs inside the fine-tuning job (torchrun / accelerate launch, one process per GPU), before the
model is wrapped for FSDP.
"""
from typing import Dict, Tuple

import torch
from transformers import TrainingArguments

from .utils import prepare_scattermoe


class ScatterMoEAccelerationPlugin:
    restricted_model_archs = ["GraniteMoeForCausalLM", "MixtralForCausalLM"]

    def __init__(self, configurations: Dict[str, Dict]):
        # ep_degree > 1 shards the experts over that many processes
        self._ep_degree = int(configurations.get("ep_degree", 1))

    def augmentation(self, model, train_args: TrainingArguments, modifiable_args: Tuple):
        rank, world_size = 0, 1
        if torch.distributed.is_initialized():
            world_size = torch.distributed.get_world_size()
            # the GPU index on this node: global ranks go on past the node's GPU count
            rank = torch.distributed.get_node_local_rank()

        model_name = getattr(model.config, "name_or_path", None)
        if not model_name:
            raise ValueError("the model configuration names no checkpoint to read the experts from")

        self._moe_module_names = prepare_scattermoe(
            model,
            checkpoint_name_or_path=model_name,
            rank=rank,
            world_size=world_size,
            ep_degree=self._ep_degree,
        )
        return model, modifiable_args
