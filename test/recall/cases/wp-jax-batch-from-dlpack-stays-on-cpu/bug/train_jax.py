"""Regress temperature from the other fields with a JAX linear model, one batch at a time."""
import jax
import jax.numpy as jnp
import numpy as np

from batchkit import to_jax


def batches(n_batches=200, batch=64, features=32, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n_batches):
        yield {"x": rng.standard_normal((batch, features), dtype=np.float32),
               "t2m": rng.standard_normal((batch, 1), dtype=np.float32)}


@jax.jit
def step(w, x, y):
    loss, grad = jax.value_and_grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
    return w - 1e-2 * grad, loss


w = jnp.zeros((32, 1))
for batch in batches():
    arrays = to_jax(batch)
    w, loss = step(w, arrays["x"], arrays["t2m"])
print("loss", float(loss), "computed on", loss.devices())
