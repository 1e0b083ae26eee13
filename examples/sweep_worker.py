"""A hyper-parameter sweep worker: `python sweep_worker.py --gpu 1 --lr 3e-4`.

Two mistakes with the value of CUDA_VISIBLE_DEVICES, both reported as GPU003:
- `args.gpu` is an int (argparse `type=int`): os.environ only takes strings, so this raises
  `TypeError: str expected, not int`;
- the fallback "0,0" repeats an id, and a repeated id hides every GPU.
"""
import argparse
import os

parser = argparse.ArgumentParser()
parser.add_argument("--gpu", type=int, default=None)
parser.add_argument("--lr", type=float, default=1e-3)
args = parser.parse_args()

if args.gpu is not None:
    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
else:
    os.environ["CUDA_VISIBLE_DEVICES"] = "0,0"

import torch  # noqa: E402

print(f"lr={args.lr} on {torch.cuda.device_count()} GPU(s)")
