"""Graph-based weather model training; Slurm starts one task per GPU (train.sbatch)."""
from pathlib import Path

import pytorch_lightning as pl
import torch
from torch_geometric.data import HeteroData

from graphs.edge_builders import KNNEdgeBuilder
from graphs.utils import get_distributed_device

GRAPH_FILE = Path("graphs/o96_multiscale.pt")


class Forecaster(pl.LightningModule):
    def __init__(self, graph: HeteroData):
        super().__init__()
        self.graph = graph
        self.net = torch.nn.Linear(99, 99)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=6.25e-4)


class Trainer:
    def __init__(self, num_gpus_per_node: int, num_nodes: int):
        self.num_gpus_per_node = num_gpus_per_node
        self.num_nodes = num_nodes
        self.graph = self.build_graph()  # runs in every task before Lightning sets up DDP

    def build_graph(self) -> HeteroData:
        if GRAPH_FILE.exists():
            return torch.load(GRAPH_FILE, map_location=get_distributed_device(), weights_only=False)
        graph = HeteroData()
        graph["data"].x = torch.rand(40320, 2) * torch.tensor([180.0, 360.0]) - torch.tensor([90.0, 0.0])
        graph["hidden"].x = torch.rand(10242, 2) * torch.tensor([180.0, 360.0]) - torch.tensor([90.0, 0.0])
        for builder in (KNNEdgeBuilder("data", "hidden", 12), KNNEdgeBuilder("hidden", "data", 3)):
            graph = builder.update_graph(graph)
        return graph

    def train(self):
        samples = torch.utils.data.TensorDataset(torch.rand(512, 99), torch.rand(512, 99))
        loader = torch.utils.data.DataLoader(samples, batch_size=8)
        trainer = pl.Trainer(
            accelerator="gpu",
            devices=self.num_gpus_per_node,
            num_nodes=self.num_nodes,
            strategy="ddp",
            max_epochs=1,
        )
        trainer.fit(Forecaster(self.graph), loader)


if __name__ == "__main__":
    Trainer(num_gpus_per_node=4, num_nodes=1).train()
