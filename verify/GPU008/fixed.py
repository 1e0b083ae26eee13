import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import threading
import torch

out = {}
device = torch.device("cuda", 1)


def worker():
    out["worker"] = torch.ones(1, device=device).device.index


t = threading.Thread(target=worker)
t.start()
t.join()
x = torch.ones(1, device=device)
_probe.fact("main_thread_device", x.device.index)
_probe.fact("worker_device", out["worker"])
