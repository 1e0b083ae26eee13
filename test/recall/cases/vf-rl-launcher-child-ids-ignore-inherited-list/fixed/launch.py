"""Start an RL run on one machine: an inference server and a trainer, each on its own GPUs."""
import argparse
import os
import sys
from subprocess import Popen


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--infer-gpus", type=int, default=2)
    parser.add_argument("--train-gpus", type=int, default=2)
    return parser.parse_args()


def physical_gpu_ids():
    inherited = os.environ.get("CUDA_VISIBLE_DEVICES")
    if inherited is None:
        import pynvml

        pynvml.nvmlInit()
        return list(range(pynvml.nvmlDeviceGetCount()))
    return [int(tok) for tok in inherited.split(",") if tok.strip()]


def run_local(args):
    physical = physical_gpu_ids()
    wanted = args.infer_gpus + args.train_gpus
    if wanted > len(physical):
        raise ValueError(f"{wanted} GPUs requested, only {physical} available")
    infer_ids = physical[: args.infer_gpus]
    train_ids = physical[args.infer_gpus : wanted]

    print(f"starting inference on GPU(s) {infer_ids}, trainer on GPU(s) {train_ids}")
    server = Popen(
        [sys.executable, "-m", "serve_policy"],
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ",".join(map(str, infer_ids))},
    )
    trainer = Popen(
        [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={len(train_ids)}", "train_policy.py"],
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ",".join(map(str, train_ids))},
    )
    procs = [server, trainer]
    for p in procs:
        p.wait()


if __name__ == "__main__":
    run_local(parse_args())
