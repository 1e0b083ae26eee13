"""RL fine-tuning driver: one learner actor per GPU, placed by Ray anywhere in the cluster.

The driver runs on the launch node, whose job launcher sets CUDA_VISIBLE_DEVICES for it.
"""
import os

import ray
import torch
from ray.util.placement_group import placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy


@ray.remote(num_gpus=1)
class LearnerActor:
    def __init__(self, rank, world_size):
        self.rank = rank
        self.world_size = world_size
        # Ray narrows CUDA_VISIBLE_DEVICES to the GPU it assigned, so "cuda" is that GPU
        self.device = torch.device("cuda")
        self.policy = torch.nn.Linear(2048, 2048).to(self.device)
        self.optimizer = torch.optim.AdamW(self.policy.parameters(), lr=1e-6)

    def train_step(self, batch_size):
        x = torch.randn(batch_size, 2048, device=self.device)
        loss = self.policy(x).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return self.rank, loss.item()


def main():
    num_learners = int(os.environ.get("NUM_LEARNERS", "16"))
    # workers on every node get the driver's environment, except its GPU mask:
    # Ray sets CUDA_VISIBLE_DEVICES itself for each actor from the GPUs it assigned
    gpu_masks = ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
    env_vars = {k: v for k, v in os.environ.items() if k not in gpu_masks}
    ray.init(runtime_env={"env_vars": env_vars})

    pg = placement_group([{"GPU": 1, "CPU": 4}] * num_learners, strategy="PACK")
    ray.get(pg.ready())
    learners = [
        LearnerActor.options(
            scheduling_strategy=PlacementGroupSchedulingStrategy(
                placement_group=pg, placement_group_bundle_index=i
            )
        ).remote(i, num_learners)
        for i in range(num_learners)
    ]
    for step in range(10):
        results = ray.get([learner.train_step.remote(8) for learner in learners])
        print(step, sorted(results)[:2])


if __name__ == "__main__":
    main()
