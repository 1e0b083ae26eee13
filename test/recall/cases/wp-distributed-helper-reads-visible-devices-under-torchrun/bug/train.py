"""LoRA fine-tuning entry point.

Run: torchrun --nproc-per-node <gpus> -m train example/7B.yaml
"""
import logging
import os
import sys

import torch
import torch.distributed as dist
import yaml

from finetune.distributed import BACKEND, avg_aggregate, get_rank, set_device

logger = logging.getLogger("train")


class LoRALinear(torch.nn.Module):
    def __init__(self, dim, rank):
        super().__init__()
        self.base = torch.nn.Linear(dim, dim, bias=False).requires_grad_(False)
        self.down = torch.nn.Linear(dim, rank, bias=False)
        self.up = torch.nn.Linear(rank, dim, bias=False)
        torch.nn.init.zeros_(self.up.weight)

    def forward(self, x):
        return self.base(x) + self.up(self.down(x))


def train(config_path):
    logging.basicConfig(level=logging.INFO)
    with open(config_path) as f:
        cfg = yaml.safe_load(f)

    if "LOCAL_RANK" in os.environ:
        set_device()
        dist.init_process_group(backend=BACKEND)
    else:
        logger.error("not started by torchrun: running without a process group")

    torch.manual_seed(cfg["seed"])
    model = LoRALinear(cfg["dim"], cfg["lora_rank"]).cuda()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg["lr"])
    for step in range(cfg["max_steps"]):
        x = torch.randn(cfg["batch_size"], cfg["dim"], device="cuda")
        loss = (model(x) - x.flip(-1)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % cfg["log_freq"] == 0:
            mean_loss = avg_aggregate(loss.item()) if dist.is_initialized() else loss.item()
            if get_rank() == 0:
                logger.info("step %d loss %.4f", step, mean_loss)


if __name__ == "__main__":
    train(sys.argv[1])
