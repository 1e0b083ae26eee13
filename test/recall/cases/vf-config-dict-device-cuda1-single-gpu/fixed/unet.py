import torch
import torch.nn as nn


class UNet(nn.Module):
    """A deliberately small stand-in for the DDPM U-Net."""

    def __init__(self, ch, ch_mult, num_res_blocks, dropout):
        super().__init__()
        self.time_embed = nn.Embedding(1000, ch)
        self.head = nn.Conv2d(3, ch, 3, padding=1)
        blocks = []
        for _ in range(num_res_blocks * len(ch_mult)):
            blocks += [nn.GroupNorm(32, ch), nn.SiLU(), nn.Dropout(dropout), nn.Conv2d(ch, ch, 3, padding=1)]
        self.body = nn.Sequential(*blocks)
        self.tail = nn.Conv2d(ch, 3, 3, padding=1)

    def forward(self, x, t):
        h = self.head(x) + self.time_embed(t)[:, :, None, None]
        return self.tail(self.body(h))
