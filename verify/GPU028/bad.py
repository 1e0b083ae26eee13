import _probe  # measurement only: reports the physical GPU(s) by pid at exit (../verify/_probe.py)
import os

os.environ["XLA_CLIENT_MEM_FRACTION"] = ".25"
os.environ["XLA_PYTHON_CLIENT_MEM_FRACTION"] = ".25"  # both names: jax refuses to start the backend
import jax

print(jax.devices())
