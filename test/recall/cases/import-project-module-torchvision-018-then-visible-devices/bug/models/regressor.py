import torch
import torchvision.models as tv_models


class PoseRegressor(torch.nn.Module):
    """A ResNet backbone with a small head that predicts pose parameters."""

    def __init__(self, n_params=72):
        super().__init__()
        backbone = tv_models.resnet18(weights=None)
        backbone.fc = torch.nn.Identity()
        self.backbone = backbone
        self.head = torch.nn.Linear(512, n_params)

    def forward(self, images):
        return self.head(self.backbone(images))
