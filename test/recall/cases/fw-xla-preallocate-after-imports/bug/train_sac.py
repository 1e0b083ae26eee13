import argparse
import os

import flax.linen as nn
import gymnasium as gym
import jax
import jax.numpy as jnp
import optax

os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"

parser = argparse.ArgumentParser()
parser.add_argument("-env", default="HalfCheetah-v4")
parser.add_argument("-seed", type=int, default=1)
parser.add_argument("-steps", type=int, default=100_000)
args = parser.parse_args()


class Critic(nn.Module):
    @nn.compact
    def __call__(self, obs, act):
        x = jnp.concatenate([obs, act], -1)
        x = nn.relu(nn.Dense(256)(x))
        return nn.Dense(1)(nn.relu(nn.Dense(256)(x)))


env = gym.make(args.env)
obs, _ = env.reset(seed=args.seed)
key = jax.random.PRNGKey(args.seed)
critic = Critic()
params = critic.init(key, jnp.asarray(obs)[None], jnp.zeros((1, env.action_space.shape[0])))
tx = optax.adam(3e-4)
opt_state = tx.init(params)
print("devices:", jax.devices())
