"""Encode/decode a list of wav files with a neural codec; the driver script starts one
copy per GPU with CUDA_VISIBLE_DEVICES set to that GPU's id."""
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--wav_scp", required=True)
parser.add_argument("--model_dir", required=True)
parser.add_argument("--ngpu", type=int, default=1)
args = parser.parse_args()

if args.ngpu > 0 and torch.cuda.is_available():
    # the one visible GPU is always ordinal 0, whatever its physical id
    torch.cuda.set_device(0)
    device = "cuda"
else:
    device = "cpu"
print("decoding", args.wav_scp, "on", device)
