"""Search for a Lyapunov function of the damped pendulum with a small network."""
import torch

from train_utils import DEVICE, train_lyapunov


def pendulum(x):
    theta, omega = x[:, 0], x[:, 1]
    return torch.stack([omega, -torch.sin(theta) - 0.5 * omega], dim=1)


if __name__ == "__main__":
    V = torch.nn.Sequential(torch.nn.Linear(2, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
    samples = (torch.rand(2_000_000, 2) - 0.5) * 6.0
    V = train_lyapunov(V, pendulum, samples)
    torch.save(V.state_dict(), "lyapunov_pendulum.pt")
    print("trained on", DEVICE)
