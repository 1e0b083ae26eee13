import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
for gpu in tf.config.list_physical_devices("GPU"):
    tf.config.experimental.set_memory_growth(gpu, True)
