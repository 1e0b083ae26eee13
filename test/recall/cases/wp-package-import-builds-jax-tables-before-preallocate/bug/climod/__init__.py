"""A small intermediate-complexity atmospheric model in JAX."""
from climod.model import Model

__all__ = ["Model"]
