import os
import time
from collections import OrderedDict

import numpy as np
import tensorflow as tf

# Local modules
import gym_util

physical_devices_gpu = tf.config.list_physical_devices("GPU")
for gpu in physical_devices_gpu:
    tf.config.experimental.set_memory_growth(gpu, True)
# Imported only after the GPUs are configured: importing model_nets builds a tensor
# (a default argument), which starts the TensorFlow runtime.
import model_nets as nets


class GeneralAI:
    def __init__(self, obs_shape, latent_size=64, max_episodes=10):
        self.obs_spec = gym_util.get_spec(obs_shape)
        self.net = nets.ArchFull(latent_size, params_size=2)
        self.optimizer = tf.keras.optimizers.Adam(1e-4)
        self.max_episodes = max_episodes
        self.metrics = OrderedDict(rewards=[], loss=[])

    def train_episode(self):
        obs = gym_util.space_to_feat(np.random.rand(*self.obs_spec["event_shape"]))
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.net(obs)))
        grads = tape.gradient(loss, self.net.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.net.trainable_variables))
        return float(loss)


if __name__ == "__main__":
    curdir = os.path.expanduser("~")
    agent = GeneralAI(obs_shape=(8,))
    t0 = time.time()
    for episode in range(agent.max_episodes):
        agent.metrics["loss"].append(agent.train_episode())
    print(f"{time.time() - t0:.1f}s", agent.metrics["loss"][-1], curdir)
