import os

import torch


def init_torch(num_accs_per_task):
    torch.set_printoptions(linewidth=120)
    if not torch.cuda.is_available():
        return [torch.device("cpu")]
    local_id = os.environ.get("SLURM_LOCALID", "-1")
    if local_id == "-1":
        return ["cuda"]
    first = int(local_id) * num_accs_per_task
    devices = [f"cuda:{first + i}" for i in range(num_accs_per_task)]
    torch.cuda.set_device(first)
    print("devices:", devices)
    return devices
