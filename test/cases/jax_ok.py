import os

os.environ["XLA_PYTHON_CLIENT_MEM_FRACTION"] = ".5"
import jax

print(jax.devices())
