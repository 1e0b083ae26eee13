from concurrent.futures import ThreadPoolExecutor

import torch


def on_gpu(i):
    torch.cuda.set_device(1)
    return torch.ones(i + 1, device="cuda").sum().item()


with ThreadPoolExecutor(2) as pool:
    print(list(pool.map(on_gpu, [0, 1])))
