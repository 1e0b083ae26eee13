import tensorflow as tf


def setup_devices(gpu_ids):
    gpus = tf.config.list_physical_devices("GPU")
    selected = [gpus[i] for i in gpu_ids]
    tf.config.set_visible_devices(selected, "GPU")
    for gpu in selected:
        tf.config.experimental.set_memory_growth(gpu, True)
