import multiprocessing as mp
import os

from engine_core import run_engine_core

MODEL = "Qwen/Qwen2.5-7B"
PROMPTS = ["The capital of France is", "GPUs are fast because", "Once upon a time"]


def launch(dp_size, gpus_per_rank=1):
    ctx = mp.get_context("spawn")
    procs = []
    saved = os.environ.get("CUDA_VISIBLE_DEVICES")
    try:
        for rank in range(dp_size):
            shard = PROMPTS[rank::dp_size]
            first = rank * gpus_per_rank
            # A spawned child copies the parent's environment when it starts, before
            # its imports run: set the variable here, not inside the child.
            os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(first + i) for i in range(gpus_per_rank))
            p = ctx.Process(target=run_engine_core, args=(rank, gpus_per_rank, MODEL, shard))
            p.start()
            procs.append(p)
    finally:
        if saved is None:
            os.environ.pop("CUDA_VISIBLE_DEVICES", None)
        else:
            os.environ["CUDA_VISIBLE_DEVICES"] = saved
    for p in procs:
        p.join()


if __name__ == "__main__":
    launch(dp_size=2)
