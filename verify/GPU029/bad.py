import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import jax
import jax.numpy as jnp

print(jax.devices())
jax.config.update("jax_platforms", "cpu")  # too late: the backend already started on the GPU
_probe.fact("platform", list(jnp.ones(3).devices())[0].platform)
