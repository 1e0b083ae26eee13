import torch_geometric
from torch_geometric.nn import GCNConv
from ultralytics import YOLO

# Scene-graph head (trained later on the detections) and the detector share this script.
relation_head = GCNConv(256, 64)

model = YOLO("yolo11n.pt")
results = model.train(data="coco8.yaml", epochs=3, imgsz=640, device="cuda:1")
print(torch_geometric.__version__, results.save_dir)
