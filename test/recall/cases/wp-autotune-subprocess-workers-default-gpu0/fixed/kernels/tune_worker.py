"""Benchmark worker: reads one tile configuration per line, answers with its time in ms."""
import json
import sys

import torch


def bench(config, shape):
    device = torch.device("cuda")
    a = torch.randn(shape[0], shape[1], device=device, dtype=torch.bfloat16)
    b = torch.randn(shape[1], shape[2], device=device, dtype=torch.bfloat16)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(config["repeats"]):
        torch.matmul(a, b)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / config["repeats"]


def main():
    print("READY", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        print(json.dumps({"ms": bench(request["config"], request["shape"])}), flush=True)


if __name__ == "__main__":
    main()
