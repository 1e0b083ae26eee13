"""Sample images from a trained diffusion model; start one MPI rank per GPU."""
import argparse

import numpy as np
import torch as th
import torch.distributed as dist

from guided_diffusion import dist_util


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_path", required=True)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--image_size", type=int, default=64)
    parser.add_argument("--steps", type=int, default=250)
    args = parser.parse_args()

    dist_util.setup_dist()
    device = dist_util.dev()
    model = th.jit.load(args.model_path, map_location=device).eval()

    x = th.randn(args.batch_size, 3, args.image_size, args.image_size, device=device)
    with th.no_grad():
        for t in reversed(range(args.steps)):
            x = model(x, th.full((args.batch_size,), t, device=device))
    images = ((x + 1) * 127.5).clamp(0, 255).to(th.uint8).permute(0, 2, 3, 1).cpu().numpy()
    np.savez(f"samples_rank{dist.get_rank()}.npz", images)


if __name__ == "__main__":
    main()
