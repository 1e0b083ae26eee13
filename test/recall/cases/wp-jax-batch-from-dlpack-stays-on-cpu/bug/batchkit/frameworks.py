import numpy as np


def to_torch(batch, device=None):
    import torch

    return {k: torch.from_numpy(np.ascontiguousarray(v)).to(device or "cpu") for k, v in batch.items()}


def to_jax(batch):
    """Zero-copy view of each NumPy field as a JAX array."""
    import jax.numpy as jnp

    return {k: jnp.from_dlpack(np.ascontiguousarray(v)) for k, v in batch.items()}
