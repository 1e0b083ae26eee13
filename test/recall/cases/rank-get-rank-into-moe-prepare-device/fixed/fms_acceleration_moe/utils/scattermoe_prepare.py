"""Convert the expert layers of a MoE model, keeping this process's shard of experts on its GPU."""
from typing import List

import torch
from torch.distributed.device_mesh import init_device_mesh

KEY_REPLICATE = "data_parallel"
KEY_EXPERT_PARALLEL = "expert_parallel"


def prepare_scattermoe(
    model: torch.nn.Module,
    checkpoint_name_or_path: str = None,
    rank: int = None,
    world_size: int = None,
    ep_degree: int = 1,
    device_type: str = "cuda",
) -> List[str]:
    assert world_size % ep_degree == 0, f"world size {world_size} is not divisible by ep_degree {ep_degree}"
    num_experts = model.config.num_local_experts
    experts_per_device = num_experts // ep_degree

    # the GPU that holds this process's experts
    device = torch.device(f"{device_type}:{rank}")

    device_mesh = None
    if ep_degree > 1:
        device_mesh = init_device_mesh(
            device_type,
            (world_size // ep_degree, ep_degree),
            mesh_dim_names=(KEY_REPLICATE, KEY_EXPERT_PARALLEL),
        )

    shard = range(num_experts)
    if device_mesh is not None:
        index = device_mesh[KEY_EXPERT_PARALLEL].get_local_rank()
        shard = range(index * experts_per_device, (index + 1) * experts_per_device)

    converted = []
    for name, module in model.named_modules():
        if name.endswith("block_sparse_moe"):
            for expert_id in shard:
                module.experts[expert_id].to(device)
            converted.append(name)
    return converted
