import numpy as np
from numba import cuda


@cuda.jit
def add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


def main():
    n = 1 << 24
    gpus = cuda.gpus
    print(f"{len(gpus)} GPU(s) visible")
    for dev in gpus:
        with dev:
            a = cuda.to_device(np.ones(n, dtype=np.float32))
            b = cuda.to_device(np.ones(n, dtype=np.float32))
            out = cuda.device_array_like(a)
            add[(n + 255) // 256, 256](a, b, out)
            print(dev.id, out.copy_to_host()[:4])


if __name__ == "__main__":
    main()
