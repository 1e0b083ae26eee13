"""Train federated clients in parallel, one Ray actor per GPU."""
import ray
import torch

from utils.functional import get_optimal_cuda_device


@ray.remote(num_gpus=1)
class ClientWorker:
    def __init__(self, client_id):
        self.client_id = client_id
        self.device = get_optimal_cuda_device(use_cuda=True)
        self.model = torch.nn.Linear(784, 10).to(self.device)

    def train_round(self, global_state, steps=20):
        self.model.load_state_dict(global_state)
        opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        for _ in range(steps):
            x = torch.randn(64, 784, device=self.device)
            loss = self.model(x).logsumexp(dim=1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return {k: v.cpu() for k, v in self.model.state_dict().items()}


if __name__ == "__main__":
    ray.init()
    global_model = torch.nn.Linear(784, 10)
    workers = [ClientWorker.remote(i) for i in range(4)]
    for _ in range(3):
        states = ray.get([w.train_round.remote(global_model.state_dict()) for w in workers])
        global_model.load_state_dict({k: sum(s[k] for s in states) / len(states) for k in states[0]})
