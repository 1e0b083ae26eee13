import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import threading
import torch

out = {}


def worker():
    torch.cuda.set_device(1)  # per thread: the main thread stays on device 0
    out["worker"] = torch.ones(1, device="cuda").device.index


t = threading.Thread(target=worker)
t.start()
t.join()
x = torch.ones(1, device="cuda")
_probe.fact("main_thread_device", x.device.index)
_probe.fact("worker_device", out["worker"])
