import torch
import torch.nn as nn
from torch.nn import init


class GlyphGenerator(nn.Module):
    def __init__(self, ngf):
        super().__init__()
        self.encode = nn.Sequential(
            nn.Conv2d(2, ngf, 7, padding=3), nn.InstanceNorm2d(ngf), nn.ReLU(True),
            nn.Conv2d(ngf, ngf * 2, 3, stride=2, padding=1), nn.InstanceNorm2d(ngf * 2), nn.ReLU(True),
        )
        self.decode = nn.Sequential(
            nn.ConvTranspose2d(ngf * 2, ngf, 3, stride=2, padding=1, output_padding=1),
            nn.InstanceNorm2d(ngf), nn.ReLU(True),
            nn.Conv2d(ngf, 1, 7, padding=3), nn.Tanh(),
        )

    def forward(self, content, style):
        return self.decode(self.encode(torch.cat([content, style], dim=1)))


def init_net(net, gpu_ids, gain=0.02):
    if len(gpu_ids) > 0:
        assert torch.cuda.is_available()
        net.to(gpu_ids[0])
        net = nn.DataParallel(net, gpu_ids)
    for module in net.modules():
        if isinstance(module, (nn.Conv2d, nn.ConvTranspose2d)):
            init.normal_(module.weight.data, 0.0, gain)
    return net


def define_G(ngf, gpu_ids):
    return init_net(GlyphGenerator(ngf), gpu_ids)
