"""Training helpers for the neural Lyapunov-function search."""
import torch

DEVICE = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


def lyapunov_risk(V, f, x):
    x = x.requires_grad_(True)
    v = V(x)
    grad = torch.autograd.grad(v.sum(), x, create_graph=True)[0]
    lie = (grad * f(x)).sum(dim=1, keepdim=True)
    v0 = V(torch.zeros(1, x.shape[1], device=x.device))
    return torch.relu(-v).mean() + torch.relu(lie).mean() + v0.pow(2).sum()


def train_lyapunov(V, f, samples, epochs=2000, batch=4096, lr=1e-3):
    V = V.to(DEVICE)
    opt = torch.optim.Adam(V.parameters(), lr=lr)
    # the sample pool and its weights stay on the training device
    pool = samples.to(DEVICE)
    weights = torch.ones(samples.shape[0], device=DEVICE)
    for epoch in range(epochs):
        idx = torch.multinomial(weights, batch)
        loss = lyapunov_risk(V, f, pool[idx].to(DEVICE))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if epoch % 200 == 0:
            print(f"epoch {epoch}: risk {loss.item():.5f}")
    return V
