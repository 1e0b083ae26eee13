import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import jax
import jax.numpy as jnp

jax.config.update("jax_platforms", "cpu")
print(jax.devices())
_probe.fact("platform", list(jnp.ones(3).devices())[0].platform)
