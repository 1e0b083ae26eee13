"""Image-quality scores for translated images (PSNR, SSIM, MSE)."""
import os

import numpy as np
import torch
import torch.nn.functional as F


def psnr(a, b):
    mse = F.mse_loss(a, b).item()
    return 10 * np.log10(1.0 / max(mse, 1e-10))


def ssim(a, b, c1=0.01 ** 2, c2=0.03 ** 2):
    mu_a, mu_b = F.avg_pool2d(a, 7, 1), F.avg_pool2d(b, 7, 1)
    var_a = F.avg_pool2d(a * a, 7, 1) - mu_a ** 2
    var_b = F.avg_pool2d(b * b, 7, 1) - mu_b ** 2
    cov = F.avg_pool2d(a * b, 7, 1) - mu_a * mu_b
    num = (2 * mu_a * mu_b + c1) * (2 * cov + c2)
    den = (mu_a ** 2 + mu_b ** 2 + c1) * (var_a + var_b + c2)
    return (num / den).mean().item()


def score_folder(npy_dir):
    results = []
    for name in sorted(os.listdir(npy_dir)):
        pair = torch.from_numpy(np.load(os.path.join(npy_dir, name))).float()
        results.append((psnr(pair[0:1], pair[1:2]), ssim(pair[0:1], pair[1:2])))
    return np.mean(results, axis=0)


if __name__ == "__main__":
    print(score_folder("saved_info/experiment_edge/npy"))
