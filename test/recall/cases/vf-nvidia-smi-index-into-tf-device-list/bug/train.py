import subprocess

import numpy as np
import tensorflow as tf


def get_gpu_free_memory():
    """Free memory of each GPU in MiB, in nvidia-smi's order."""
    out = subprocess.check_output(
        ["nvidia-smi", "--query-gpu=memory.free", "--format=csv,noheader,nounits"], text=True
    )
    return [int(line) for line in out.strip().splitlines()]


def use_gpu(device_ind):
    """Make a single GPU visible to TensorFlow."""
    gpus = tf.config.list_physical_devices("GPU")
    tf.config.set_visible_devices(gpus[device_ind], "GPU")


def build_model():
    return tf.keras.Sequential(
        [tf.keras.layers.Input((64, 64, 1)), tf.keras.layers.Conv2D(16, 3), tf.keras.layers.GlobalAveragePooling2D(), tf.keras.layers.Dense(4)]
    )


def main():
    free = get_gpu_free_memory()
    best = int(np.argmax(free))
    print(f"auto-selected GPU {best} ({free[best]} MiB free)")
    use_gpu(best)
    model = build_model()
    model.compile(optimizer="adam", loss="mse")
    x = np.random.rand(256, 64, 64, 1).astype("float32")
    y = np.random.rand(256, 4).astype("float32")
    model.fit(x, y, epochs=2, batch_size=32)


if __name__ == "__main__":
    main()
