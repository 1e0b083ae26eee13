import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os

os.environ["XLA_CLIENT_MEM_FRACTION"] = ".25"
import jax

_probe.fact("pool_below_half_of_default", jax.devices()[0].memory_stats()["bytes_limit"] < 0.5 * 0.75 * 150e9)
