"""The model: a state, a time step and a run loop."""
import jax
import jax.numpy as jnp

from climod.physics.terms import physics_tendencies


class Model:
    def __init__(self, n_levels=8, n_lat=48, n_lon=96, dt=1800.0):
        self.shape = (n_levels, n_lat, n_lon)
        self.dt = dt

    def initial_state(self, key):
        return 250.0 + jax.random.normal(key, self.shape)

    def step(self, temperature):
        return temperature + self.dt * physics_tendencies(temperature)

    def run(self, key, n_steps):
        state = self.initial_state(key)
        for _ in range(n_steps):
            state = self.step(state)
        return jnp.mean(state)
