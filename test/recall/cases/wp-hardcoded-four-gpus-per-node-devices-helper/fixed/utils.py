import torch


def init_torch():
    torch.set_printoptions(linewidth=120)
    if not torch.cuda.is_available():
        return [torch.device("cpu")]
    # every GPU this task was given, numbered from 0 in its own view
    devices = [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    print("devices:", devices)
    return devices
