import os

os.environ["CUDA_VISIBLE_DEVICES"] = "1"

import torch
import monai
from monai.losses import DiceLoss
from monai.networks.nets import UNet

device = torch.device("cuda:0")
net = UNet(
    spatial_dims=3,
    in_channels=1,
    out_channels=2,
    channels=(16, 32, 64, 128),
    strides=(2, 2, 2),
).to(device)
loss_fn = DiceLoss(to_onehot_y=True, softmax=True)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-4)

for step in range(50):
    image = torch.rand(2, 1, 64, 64, 64, device=device)
    label = torch.randint(0, 2, (2, 1, 64, 64, 64), device=device)
    loss = loss_fn(net(image), label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(monai.__version__, torch.cuda.get_device_name(0))
