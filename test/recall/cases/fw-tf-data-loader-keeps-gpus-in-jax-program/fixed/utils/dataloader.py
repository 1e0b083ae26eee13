"""tf.data input pipeline for video episodes stored as TFRecords; batches go to JAX."""
import functools

import jax
import tensorflow as tf

# TensorFlow only feeds the input pipeline: keep it off the GPUs, which JAX trains on
tf.config.set_visible_devices([], "GPU")


def _parse_episode(example_proto, image_h, image_w, image_c):
    features = {
        "sequence_length": tf.io.FixedLenFeature([], tf.int64),
        "raw_video": tf.io.FixedLenFeature([], tf.string),
    }
    example = tf.io.parse_single_example(example_proto, features)
    video = tf.io.decode_raw(example["raw_video"], out_type=tf.uint8)
    return tf.reshape(video, (example["sequence_length"], image_h, image_w, image_c))


def _random_clip(episode, seq_len):
    start = tf.random.uniform((), 0, tf.shape(episode)[0] - seq_len + 1, dtype=tf.int32)
    return tf.cast(episode[start : start + seq_len], tf.float32) / 255.0


def get_dataloader(tfrecord_paths, seq_len, global_batch_size, image_h, image_w, image_c, seed=42):
    per_process_batch = global_batch_size // jax.process_count()
    dataset = tf.data.TFRecordDataset(tfrecord_paths, num_parallel_reads=tf.data.AUTOTUNE)
    dataset = dataset.shard(jax.process_count(), jax.process_index())
    dataset = dataset.map(
        functools.partial(_parse_episode, image_h=image_h, image_w=image_w, image_c=image_c),
        num_parallel_calls=tf.data.AUTOTUNE,
    )
    dataset = dataset.map(functools.partial(_random_clip, seq_len=seq_len))
    dataset = dataset.shuffle(1000, seed=seed).repeat().batch(per_process_batch, drop_remainder=True)
    return dataset.prefetch(tf.data.AUTOTUNE).as_numpy_iterator()
