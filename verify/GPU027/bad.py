import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os

os.environ["JAX_PLATFORMS"] = "gpu"  # jax 0.11 expands "gpu" to cuda and rocm
import jax

print(jax.devices())
