import torch

from networks import define_G
from options import TrainOptions

opt = TrainOptions().parse()
device = torch.device(f"cuda:{opt.gpu_ids[0]}") if opt.gpu_ids else torch.device("cpu")

netG = define_G(opt.ngf, opt.gpu_ids)
optimizer = torch.optim.Adam(netG.parameters(), lr=opt.lr, betas=(0.5, 0.999))

for epoch in range(opt.n_epochs):
    content = torch.randn(opt.batch_size, 1, 64, 64, device=device)
    style = torch.randn(opt.batch_size, 1, 64, 64, device=device)
    fake = netG(content, style)
    loss = (fake - content).abs().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"epoch {epoch}: L1 {loss.item():.4f}")
