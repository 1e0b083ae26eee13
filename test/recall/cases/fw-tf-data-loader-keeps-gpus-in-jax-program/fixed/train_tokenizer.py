"""Train the video tokenizer (an autoencoder) with JAX on all local GPUs."""
import glob

import jax
import jax.numpy as jnp
import optax

from utils.dataloader import get_dataloader

SEQ_LEN, H, W, C = 16, 64, 64, 3


def init_params(key):
    k1, k2 = jax.random.split(key)
    return {
        "enc": jax.random.normal(k1, (H * W * C, 512)) * 0.01,
        "dec": jax.random.normal(k2, (512, H * W * C)) * 0.01,
    }


def loss_fn(params, frames):
    x = frames.reshape(frames.shape[0] * frames.shape[1], -1)
    z = jnp.tanh(x @ params["enc"])
    return jnp.mean((z @ params["dec"] - x) ** 2)


def main():
    params = init_params(jax.random.PRNGKey(0))
    optimizer = optax.adamw(3e-4)
    opt_state = optimizer.init(params)

    @jax.jit
    def step(params, opt_state, frames):
        loss, grads = jax.value_and_grad(loss_fn)(params, frames)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    batches = get_dataloader(sorted(glob.glob("data/episodes/*.tfrecord")), SEQ_LEN, 48, H, W, C)
    for i, frames in zip(range(10_000), batches):
        params, opt_state, loss = step(params, opt_state, jnp.asarray(frames))
        if i % 100 == 0:
            print(i, float(loss), jax.devices())


if __name__ == "__main__":
    main()
