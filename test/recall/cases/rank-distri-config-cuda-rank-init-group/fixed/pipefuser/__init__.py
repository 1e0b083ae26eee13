from .utils import DistriConfig

__all__ = ["DistriConfig"]
