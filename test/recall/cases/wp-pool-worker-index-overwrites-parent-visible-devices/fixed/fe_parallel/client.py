"""Clients that run free-energy jobs locally, one job per worker process."""
import multiprocessing
import os
from concurrent import futures


class ProcessPoolClient:
    def __init__(self, max_workers):
        ctx = multiprocessing.get_context("spawn")
        self.executor = futures.ProcessPoolExecutor(max_workers=max_workers, mp_context=ctx)
        self.max_workers = max_workers
        self._idx = 0

    def submit(self, task_fn, *args):
        future = self.executor.submit(task_fn, *args)
        self._idx = (self._idx + 1) % self.max_workers
        return future


class CUDAPoolClient(ProcessPoolClient):
    """Runs each submitted job on its own GPU: worker i gets the i-th GPU this process may use.

    The number of workers should be the number of GPUs.
    """

    def __init__(self, max_workers):
        super().__init__(max_workers)
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if visible:
            self._gpu_ids = visible.split(",")
        else:
            self._gpu_ids = [str(i) for i in range(max_workers)]

    @staticmethod
    def wrapper(max_workers, gpu_id, fn, *args):
        # one worker: leave CUDA_VISIBLE_DEVICES alone so that several
        # single-GPU jobs can share a node
        if max_workers > 1:
            os.environ["CUDA_VISIBLE_DEVICES"] = gpu_id
        return fn(*args)

    def submit(self, task_fn, *args):
        gpu_id = self._gpu_ids[self._idx]
        future = self.executor.submit(self.wrapper, self.max_workers, gpu_id, task_fn, *args)
        self._idx = (self._idx + 1) % self.max_workers
        return future
