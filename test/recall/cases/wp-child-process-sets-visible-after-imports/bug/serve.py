import multiprocessing as mp

from engine_core import run_engine_core

MODEL = "Qwen/Qwen2.5-7B"
PROMPTS = ["The capital of France is", "GPUs are fast because", "Once upon a time"]


def launch(dp_size, gpus_per_rank=1):
    ctx = mp.get_context("spawn")
    procs = []
    for rank in range(dp_size):
        shard = PROMPTS[rank::dp_size]
        p = ctx.Process(target=run_engine_core, args=(rank, gpus_per_rank, MODEL, shard))
        p.start()
        procs.append(p)
    for p in procs:
        p.join()


if __name__ == "__main__":
    launch(dp_size=2)
