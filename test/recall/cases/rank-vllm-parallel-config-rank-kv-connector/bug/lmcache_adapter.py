"""KV-cache offloading for vLLM: each vLLM worker builds one cache engine when the connector starts."""
import torch


class CacheEngine:
    def __init__(self, kv_shape, dtype, device, chunk_size):
        self.device = device
        self.chunk_size = chunk_size
        # pinned host pool for offloaded chunks, plus a staging chunk on the worker's GPU
        self.host_pool = torch.empty(kv_shape, dtype=dtype, pin_memory=True)
        self.staging = torch.empty(kv_shape, dtype=dtype, device=device)


def init_cache_engine(vllm_config, chunk_size: int = 256) -> CacheEngine:
    model_config = vllm_config.model_config
    parallel_config = vllm_config.parallel_config
    num_layers = model_config.get_num_layers(parallel_config)
    num_kv_heads = model_config.get_num_kv_heads(parallel_config)
    head_size = model_config.get_head_size()
    kv_shape = (num_layers, 2, chunk_size, num_kv_heads, head_size)

    # the engine's buffers go on this worker's GPU
    device = torch.device(f"cuda:{parallel_config.rank}")
    return CacheEngine(kv_shape, model_config.dtype, device, chunk_size)
