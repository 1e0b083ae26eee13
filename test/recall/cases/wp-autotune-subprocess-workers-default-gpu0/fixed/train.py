"""Training step with an autotuned GEMM; one process per GPU under torchrun."""
import os

import torch
import torch.distributed as dist

from kernels import Autotuner

TUNER = Autotuner([{"block": b, "repeats": 20} for b in (64, 128, 256)], max_workers=3)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    shape = [8192, 4096, 4096]
    config = TUNER.best_config(shape)  # every rank tunes at start-up
    weight = torch.randn(shape[1], shape[2], device="cuda", dtype=torch.bfloat16)
    x = torch.randn(shape[0], shape[1], device="cuda", dtype=torch.bfloat16)
    y = x @ weight
    dist.all_reduce(y)
    if dist.get_rank() == 0:
        print("tile config", config, "output", tuple(y.shape))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
