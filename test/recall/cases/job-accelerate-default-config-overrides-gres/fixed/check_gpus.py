import os
import time

import torch
from accelerate import Accelerator


def main():
    accelerator = Accelerator()
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "<unset>")
    print(
        f"process {accelerator.process_index}/{accelerator.num_processes}: "
        f"CUDA_VISIBLE_DEVICES={visible}, device_count={torch.cuda.device_count()}, "
        f"device={accelerator.device}"
    )
    x = torch.randn(4096, 4096, device=accelerator.device)
    start = time.time()
    for _ in range(20):
        x = x @ x
        x = x / x.norm()
    accelerator.wait_for_everyone()
    print(f"process {accelerator.process_index}: matmul loop took {time.time() - start:.2f}s")


if __name__ == "__main__":
    main()
