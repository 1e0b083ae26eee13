import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os

os.environ["JAX_PLATFORMS"] = "cuda"
import jax

_probe.fact("platform", jax.devices()[0].platform)
