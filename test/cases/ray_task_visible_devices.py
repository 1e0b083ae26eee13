import os

import ray


@ray.remote(num_gpus=1)
def shard(i):
    os.environ["CUDA_VISIBLE_DEVICES"] = str(i % 4)
    import torch
    return torch.zeros(2, device="cuda").sum().item()


@ray.remote
def score(x):
    import torch
    return torch.tensor(x).cuda().mean().item()


ray.init()
print(ray.get([shard.remote(i) for i in range(4)] + [score.remote([1.0])]))
