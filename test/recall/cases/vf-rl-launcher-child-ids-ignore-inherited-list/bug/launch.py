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


def run_local(args):
    offset = 0
    infer_ids = list(range(offset, offset + args.infer_gpus))
    offset += args.infer_gpus
    train_ids = list(range(offset, offset + args.train_gpus))

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
