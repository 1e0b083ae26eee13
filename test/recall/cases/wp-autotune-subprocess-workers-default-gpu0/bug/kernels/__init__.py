from kernels.autotuner import Autotuner

__all__ = ["Autotuner"]
