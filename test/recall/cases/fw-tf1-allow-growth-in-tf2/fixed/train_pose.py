import numpy as np
import tensorflow as tf

# Share the GPU with the labelling GUI: only grab memory as needed.
# TF2 eager mode ignores a v1 session's GPUOptions; configure the devices instead,
# before anything initialises the runtime.
for gpu in tf.config.list_physical_devices("GPU"):
    tf.config.experimental.set_memory_growth(gpu, True)

backbone = tf.keras.applications.ResNet50(include_top=False, weights=None, input_shape=(256, 256, 3))
heads = tf.keras.layers.Conv2D(17, 1, activation="sigmoid")(backbone.output)
model = tf.keras.Model(backbone.input, heads)
model.compile(optimizer=tf.keras.optimizers.Adam(1e-4), loss="binary_crossentropy")

images = np.random.rand(64, 256, 256, 3).astype("float32")
scoremaps = np.random.rand(64, 8, 8, 17).astype("float32")
model.fit(images, scoremaps, batch_size=8, epochs=2)
