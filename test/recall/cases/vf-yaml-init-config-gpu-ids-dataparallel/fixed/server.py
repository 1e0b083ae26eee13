import copy

import numpy as np

from models import TwoConvNet
from utils import initialize_model


class Server:
    def __init__(self, model_config, init_config, fed_config, optim_config):
        self.model = TwoConvNet(**model_config)
        self.init_config = init_config
        self.fraction = fed_config["fraction"]
        self.num_clients = fed_config["num_clients"]
        self.num_rounds = fed_config["num_rounds"]
        self.optim_config = optim_config
        self.clients = []

    def setup(self):
        self.model = initialize_model(self.model, **self.init_config)
        print(f"initialised {type(self.model).__name__} for {self.num_clients} clients")

    def sample_clients(self):
        count = max(int(self.fraction * self.num_clients), 1)
        return sorted(np.random.choice(self.num_clients, count, replace=False).tolist())

    def fit(self):
        for round_idx in range(1, self.num_rounds + 1):
            picked = self.sample_clients()
            global_state = copy.deepcopy(self.model.state_dict())
            print(f"round {round_idx}: clients {picked}, {len(global_state)} tensors")
