"""Run independent MCMC chains, one batch per process, across the nodes of a Slurm job."""
import jax
import jax.numpy as jnp

jax.distributed.initialize()


def log_density(theta):
    return -0.5 * jnp.sum(theta**2)


@jax.jit
def mh_step(key, theta):
    k1, k2 = jax.random.split(key)
    proposal = theta + 0.1 * jax.random.normal(k1, theta.shape)
    accept = jnp.log(jax.random.uniform(k2)) < log_density(proposal) - log_density(theta)
    return jnp.where(accept, proposal, theta)


key = jax.random.PRNGKey(jax.process_index())
theta = jnp.zeros(64)
for _ in range(10_000):
    key, sub = jax.random.split(key)
    theta = mh_step(sub, theta)
print(f"process {jax.process_index()} of {jax.process_count()}: {jax.local_devices()} mean {theta.mean():.4f}")
