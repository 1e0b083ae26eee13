import torch
import torch.nn as nn


class HumanDetectionNet(nn.Module):
    """Localises people in a coarse voxel grid built from the camera heatmaps."""

    def __init__(self, cfg):
        super().__init__()
        self.device = torch.device(int(cfg.GPUS.split(",")[0]))
        self.space_size = torch.tensor(cfg.CAPTURE_SPEC.SPACE_SIZE, device=self.device)
        self.voxels = torch.tensor(cfg.CAPTURE_SPEC.VOXELS_PER_AXIS, device=self.device)
        self.v2v = nn.Sequential(
            nn.Conv3d(15, 32, 3, padding=1), nn.BatchNorm3d(32), nn.ReLU(True),
            nn.Conv3d(32, 1, 1),
        )

    def forward(self, cubes):
        scores = self.v2v(cubes.to(self.device))
        return scores.flatten(1).max(dim=1)
