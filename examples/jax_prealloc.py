"""JAX: turning off memory preallocation after the backend is up has no effect.

jax.devices() starts the XLA backend, which reads XLA_PYTHON_CLIENT_PREALLOCATE once; by default
it has already grabbed 75% of the GPU memory. GPU Pilot reports GPU001 on the assignment.
"""
import os

import jax
import jax.numpy as jnp

print("devices:", jax.devices())

os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"  # too late: the backend already preallocated

x = jnp.ones((4096, 4096))
print(float((x @ x).sum()))
