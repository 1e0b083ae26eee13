"""Decode a clip with VALI's hardware decoder and report the decode rate."""
import os
import sys
import time

# GPU 0 runs the encoder service; decode on the second card. Set before importing
# python_vali: importing it already initialises the CUDA driver.
os.environ["CUDA_VISIBLE_DEVICES"] = "1"

import python_vali as vali


def decode_all(path):
    dec = vali.PyDecoder(input=path, opts={}, gpu_id=0)
    surf = vali.Surface.Make(dec.Format, dec.Width, dec.Height, gpu_id=0)
    frames = 0
    start = time.perf_counter()
    while True:
        success, _ = dec.DecodeSingleSurface(surf)
        if not success:
            break
        frames += 1
    return frames, time.perf_counter() - start


if __name__ == "__main__":
    n, seconds = decode_all(sys.argv[1] if len(sys.argv) > 1 else "test.mp4")
    print(f"{n} frames in {seconds:.2f}s ({n / seconds:.0f} fps)")
