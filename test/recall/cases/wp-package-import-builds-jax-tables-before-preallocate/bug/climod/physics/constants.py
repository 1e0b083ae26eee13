"""Physical constants and lookup tables of the model, built once at import."""
import jax.numpy as jnp

GRAVITY = 9.81
CP_AIR = 1004.0
SIGMA_LEVELS = jnp.linspace(0.05, 0.95, 8)
REFERENCE_PROFILE = 288.0 * SIGMA_LEVELS ** (287.0 / CP_AIR)
RELAXATION_RATE = jnp.full(8, 1.0 / (40 * 86400.0))
