"""Batches read from a chunked store, handed to torch, JAX or TensorFlow."""
from batchkit.frameworks import to_jax, to_torch

__all__ = ["to_jax", "to_torch"]
