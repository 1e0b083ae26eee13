"""Edges between the data grid and the hidden mesh, by nearest neighbours on the sphere."""
import torch
from torch_cluster import knn
from torch_geometric.data import HeteroData

from graphs.utils import get_distributed_device, latlon_to_cartesian


class KNNEdgeBuilder:
    def __init__(self, source_name: str, target_name: str, num_nearest_neighbours: int):
        self.source_name = source_name
        self.target_name = target_name
        self.k = num_nearest_neighbours
        self.device = get_distributed_device()

    def update_graph(self, graph: HeteroData) -> HeteroData:
        source = latlon_to_cartesian(graph[self.source_name].x).to(self.device)
        target = latlon_to_cartesian(graph[self.target_name].x).to(self.device)
        edge_index = knn(source, target, self.k)
        graph[(self.source_name, "to", self.target_name)].edge_index = edge_index.flip(0).cpu()
        return graph
