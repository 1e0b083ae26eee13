import torch


def latlon_to_cartesian(latlon_deg: torch.Tensor) -> torch.Tensor:
    lat, lon = torch.deg2rad(latlon_deg).unbind(-1)
    return torch.stack([lat.cos() * lon.cos(), lat.cos() * lon.sin(), lat.sin()], dim=-1)
