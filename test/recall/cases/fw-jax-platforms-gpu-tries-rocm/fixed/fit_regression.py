import argparse

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_platforms", "cuda")


def loss_fn(params, x, y):
    w, b = params
    pred = jnp.tanh(x @ w + b)
    return jnp.mean((pred - y) ** 2)


@jax.jit
def update(params, x, y, lr=1e-2):
    grads = jax.grad(loss_fn)(params, x, y)
    return [p - lr * g for p, g in zip(params, grads)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--features", type=int, default=64)
    args = parser.parse_args()

    print("backend:", jax.default_backend())
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=(4096, args.features)), dtype=jnp.float32)
    y = jnp.asarray(np.tanh(rng.normal(size=(4096, 1))), dtype=jnp.float32)
    key = jax.random.PRNGKey(0)
    params = [jax.random.normal(key, (args.features, 1)) * 0.1, jnp.zeros((1,))]
    for step in range(args.steps):
        params = update(params, x, y)
        if step % 500 == 0:
            print(step, float(loss_fn(params, x, y)))


if __name__ == "__main__":
    main()
