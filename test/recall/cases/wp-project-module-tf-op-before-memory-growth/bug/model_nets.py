import tensorflow as tf


class MLPBlock(tf.keras.layers.Layer):
    def __init__(self, hidden_size, latent_size, name="mlp"):
        super().__init__(name=name)
        self.hidden = tf.keras.layers.Dense(hidden_size, activation="relu")
        self.out = tf.keras.layers.Dense(latent_size)

    def call(self, inputs, training=None):
        return self.out(self.hidden(inputs))


class Out(tf.keras.layers.Layer):
    def __init__(self, params_size, name="out"):
        super().__init__(name=name)
        self.logits = tf.keras.layers.Dense(params_size)

    # The default argument is a tensor: it is built when this module is imported.
    def call(self, inputs, batch_size=tf.constant(1), training=None):
        out = self.logits(inputs)
        return tf.reshape(out, (batch_size, -1))


class ArchFull(tf.keras.Model):
    def __init__(self, latent_size, params_size):
        super().__init__(name="arch_full")
        self.rep = MLPBlock(latent_size * 4, latent_size, name="rep")
        self.head = Out(params_size)

    def call(self, inputs, training=None):
        return self.head(self.rep(inputs), batch_size=tf.shape(inputs)[0])
