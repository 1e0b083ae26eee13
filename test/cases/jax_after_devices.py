import os

import jax

n = jax.device_count()
os.environ["XLA_PYTHON_CLIENT_MEM_FRACTION"] = ".5"
