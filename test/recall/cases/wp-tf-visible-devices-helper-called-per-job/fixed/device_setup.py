import tensorflow as tf

_configured = None


def setup_devices(gpu_ids):
    """Configure TensorFlow's GPUs once per process, before the runtime starts."""
    global _configured
    if _configured is not None:
        if list(gpu_ids) != _configured:
            raise RuntimeError(f"GPUs already configured as {_configured}; start a new process for {list(gpu_ids)}")
        return
    gpus = tf.config.list_physical_devices("GPU")
    selected = [gpus[i] for i in gpu_ids]
    tf.config.set_visible_devices(selected, "GPU")
    for gpu in selected:
        tf.config.experimental.set_memory_growth(gpu, True)
    _configured = list(gpu_ids)
