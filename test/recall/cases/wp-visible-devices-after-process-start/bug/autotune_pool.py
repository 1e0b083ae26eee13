import multiprocessing
import os
import time

import torch


def benchmark_worker(jobs, results):
    while True:
        job = jobs.get()
        if job is None:
            break
        name, block = job
        a = torch.randn(4096, 4096, device="cuda")
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(10):
            a.view(-1, block).sum(dim=1)
        torch.cuda.synchronize()
        results.put((name, (time.perf_counter() - start) / 10, os.environ.get("CUDA_VISIBLE_DEVICES")))


class TuningPool:
    def __init__(self, n_gpus):
        ctx = multiprocessing.get_context("spawn")
        self.results = ctx.Queue()
        self.jobs, self.procs = [], []
        for gpu in range(n_gpus):
            jobs = ctx.Queue()
            p = ctx.Process(target=benchmark_worker, args=(jobs, self.results), daemon=True)
            p.start()
            os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)
            self.jobs.append(jobs)
            self.procs.append(p)

    def run(self, choices):
        for i, choice in enumerate(choices):
            self.jobs[i % len(self.jobs)].put(choice)
        return [self.results.get() for _ in choices]


if __name__ == "__main__":
    pool = TuningPool(n_gpus=8)
    print(pool.run([(f"block{b}", b) for b in (64, 128, 256, 512, 1024, 2048, 4096, 8192)]))
