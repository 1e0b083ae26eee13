import os

# Some of our hosts have no GPU even though jax[cuda12] is installed.
# JAX reads JAX_PLATFORMS when it is imported.
os.environ["JAX_PLATFORMS"] = "cpu"

import jax
import jax.numpy as jnp
import optax


def loss_fn(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


key = jax.random.PRNGKey(0)
x = jax.random.normal(key, (256, 8))
y = x @ jnp.arange(8.0)
w = jnp.zeros(8)
opt = optax.adam(0.1)
state = opt.init(w)
for _ in range(200):
    grads = jax.grad(loss_fn)(w, x, y)
    updates, state = opt.update(grads, state)
    w = optax.apply_updates(w, updates)
print(jax.devices(), float(loss_fn(w, x, y)))
