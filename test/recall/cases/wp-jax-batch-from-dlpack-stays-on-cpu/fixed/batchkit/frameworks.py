import numpy as np


def to_torch(batch, device=None):
    import torch

    return {k: torch.from_numpy(np.ascontiguousarray(v)).to(device or "cpu") for k, v in batch.items()}


def to_jax(batch, device=None):
    """Each NumPy field as a JAX array on JAX's default device (or `device`).

    from_dlpack of a host buffer gives an array committed to the CPU, and jax.jit keeps
    committed inputs where they are: put it on the accelerator explicitly.
    """
    import jax
    import jax.numpy as jnp

    target = device or jax.devices()[0]
    return {k: jax.device_put(jnp.from_dlpack(np.ascontiguousarray(v)), target) for k, v in batch.items()}
