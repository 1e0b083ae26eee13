"""Fit a small MLP on the accelerator, then score the full data set in host memory."""
import jax
import jax.numpy as jnp


def init_params(key, sizes):
    keys = jax.random.split(key, len(sizes) - 1)
    return [(jax.random.normal(k, (m, n)) * 0.01, jnp.zeros(n)) for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def forward(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


@jax.jit
def sgd_step(params, x, y):
    loss = lambda p: jnp.mean((forward(p, x) - y) ** 2)
    grads = jax.grad(loss)(params)
    return [(w - 1e-3 * gw, b - 1e-3 * gb) for (w, b), (gw, gb) in zip(params, grads)]


key = jax.random.PRNGKey(0)
params = init_params(key, [784, 512, 10])
x = jax.random.normal(key, (256, 784))
y = jax.random.normal(key, (256, 10))
for _ in range(500):
    params = sgd_step(params, x, y)

# The full-data buffers do not fit next to the training state: build them on the host.
jax.config.update("jax_platform_name", "cpu")
all_x = jnp.zeros((200_000, 784))
host_params = jax.device_put(params, jax.devices("cpu")[0])
scores = forward(host_params, all_x)
print(all_x.devices(), scores.shape)
