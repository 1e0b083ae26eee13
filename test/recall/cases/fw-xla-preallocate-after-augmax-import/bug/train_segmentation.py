import os

import jax
import jax.numpy as jnp
import augmax
import optax

os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"

augment = augmax.Chain(
    augmax.HorizontalFlip(),
    augmax.Rotate(15),
    augmax.ColorJitter(),
)


def init_params(key, channels=3, classes=2):
    k1, k2 = jax.random.split(key)
    return {
        "w1": jax.random.normal(k1, (channels, 16)) * 0.1,
        "w2": jax.random.normal(k2, (16, classes)) * 0.1,
    }


def loss_fn(params, images, masks):
    hidden = jax.nn.relu(images @ params["w1"])
    logits = hidden @ params["w2"]
    return optax.softmax_cross_entropy_with_integer_labels(logits, masks).mean()


@jax.jit
def train_step(params, opt_state, key, images, masks):
    keys = jax.random.split(key, images.shape[0])
    images = jax.vmap(augment)(keys, images)
    loss, grads = jax.value_and_grad(loss_fn)(params, images, masks)
    updates, opt_state = optimizer.update(grads, opt_state)
    return optax.apply_updates(params, updates), opt_state, loss


optimizer = optax.adam(1e-3)
key = jax.random.PRNGKey(0)
params = init_params(key)
opt_state = optimizer.init(params)
for step in range(200):
    key, data_key, aug_key = jax.random.split(key, 3)
    images = jax.random.uniform(data_key, (8, 128, 128, 3))
    masks = (images[..., 0] > 0.5).astype(jnp.int32)
    params, opt_state, loss = train_step(params, opt_state, aug_key, images, masks)
print("final loss", float(loss))
