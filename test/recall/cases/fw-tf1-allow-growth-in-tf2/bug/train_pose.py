import numpy as np
import tensorflow as tf

# Share the GPU with the labelling GUI: only grab memory as needed.
config = tf.compat.v1.ConfigProto()
config.gpu_options.allow_growth = True
tf.compat.v1.keras.backend.set_session(tf.compat.v1.Session(config=config))

backbone = tf.keras.applications.ResNet50(include_top=False, weights=None, input_shape=(256, 256, 3))
heads = tf.keras.layers.Conv2D(17, 1, activation="sigmoid")(backbone.output)
model = tf.keras.Model(backbone.input, heads)
model.compile(optimizer=tf.keras.optimizers.Adam(1e-4), loss="binary_crossentropy")

images = np.random.rand(64, 256, 256, 3).astype("float32")
scoremaps = np.random.rand(64, 8, 8, 17).astype("float32")
model.fit(images, scoremaps, batch_size=8, epochs=2)
