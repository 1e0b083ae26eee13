#!/usr/bin/env python3
"""Video upscaler CLI: splits the frames across the GPUs given with --cuda_device."""
import argparse
import multiprocessing as mp
import os

# children are started with spawn: each one imports this module again
if mp.get_start_method(allow_none=True) != "spawn":
    mp.set_start_method("spawn", force=True)

import numpy as np
import torch


def upscale_frames(frames, scale):
    model = torch.nn.Upsample(scale_factor=scale, mode="bilinear").to("cuda:0")
    batch = torch.from_numpy(frames).permute(0, 3, 1, 2).to("cuda:0")
    with torch.no_grad():
        return model(batch).permute(0, 2, 3, 1).cpu().numpy()


def _worker_process(proc_idx, device_id, frames, scale, return_queue):
    # one GPU per worker process
    os.environ["CUDA_VISIBLE_DEVICES"] = str(device_id)
    result = upscale_frames(frames, scale)
    return_queue.put((proc_idx, result))


def upscale_multi_gpu(frames, device_list, scale):
    chunks = np.array_split(frames, len(device_list))
    return_queue = mp.Queue()
    workers = []
    for idx, (device_id, chunk) in enumerate(zip(device_list, chunks)):
        p = mp.Process(target=_worker_process, args=(idx, device_id, chunk, scale, return_queue))
        p.start()
        workers.append(p)
    results = dict(return_queue.get() for _ in workers)
    for p in workers:
        p.join()
    return np.concatenate([results[i] for i in range(len(workers))])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--frames", type=int, default=64)
    parser.add_argument("--scale", type=int, default=2)
    parser.add_argument("--cuda_device", type=str, default="0")
    args = parser.parse_args()
    device_list = [d.strip() for d in args.cuda_device.split(",") if d.strip()]
    frames = np.random.rand(args.frames, 270, 480, 3).astype(np.float32)
    out = upscale_multi_gpu(frames, device_list, args.scale)
    print("upscaled", out.shape, "on GPUs", device_list)


if __name__ == "__main__":
    main()
