import torch
from jina import Flow

from encoder import TextEncoder

print("CUDA available in the gateway process:", torch.cuda.is_available(), torch.cuda.device_count())

flow = Flow(port=12345).add(uses=TextEncoder, replicas=2, name="encoder")

if __name__ == "__main__":
    with flow:
        flow.block()
