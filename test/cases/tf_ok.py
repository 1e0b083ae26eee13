import tensorflow as tf

for gpu in tf.config.list_physical_devices("GPU"):
    tf.config.experimental.set_memory_growth(gpu, True)

model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
