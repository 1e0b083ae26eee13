from jina import Flow

from encoder import TextEncoder

# No CUDA call in this process: it was started with CUDA_VISIBLE_DEVICES=RR, a
# placeholder that only the Executor replicas see replaced by a real GPU id.
flow = Flow(port=12345).add(uses=TextEncoder, replicas=2, name="encoder")

if __name__ == "__main__":
    with flow:
        flow.block()
