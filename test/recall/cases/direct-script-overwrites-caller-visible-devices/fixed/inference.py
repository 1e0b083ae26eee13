# coding: utf-8
"""Separate a music track into vocals, bass, drums and other with an ensemble of models."""

if __name__ == "__main__":
    import os

    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")

import argparse
import glob
import os

import numpy as np
import soundfile as sf
import torch
from demucs import pretrained
from demucs.apply import apply_model


def separate(model, path, device, out_dir):
    audio, sr = sf.read(path)
    mix = torch.from_numpy(np.asarray(audio.T, dtype=np.float32))[None].to(device)
    with torch.no_grad():
        sources = apply_model(model, mix, shifts=1, overlap=0.75)[0].cpu().numpy()
    name = os.path.splitext(os.path.basename(path))[0]
    for stem, wave in zip(model.sources, sources):
        sf.write(os.path.join(out_dir, f"{name}_{stem}.wav"), wave.T, sr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--input", nargs="+", required=True)
    parser.add_argument("--output_folder", required=True)
    parser.add_argument("--cpu", action="store_true")
    args = parser.parse_args()

    device = "cpu" if args.cpu or not torch.cuda.is_available() else "cuda:0"
    model = pretrained.get_model("htdemucs_ft").to(device)
    os.makedirs(args.output_folder, exist_ok=True)
    for pattern in args.input:
        for path in sorted(glob.glob(pattern)):
            separate(model, path, device, args.output_folder)
