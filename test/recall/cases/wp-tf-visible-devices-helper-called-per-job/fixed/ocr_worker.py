import numpy as np
import tensorflow as tf

from device_setup import setup_devices


def run_job(job):
    model = tf.keras.models.load_model(job["model_path"])
    pages = np.stack([np.asarray(p, dtype="float32") / 255.0 for p in job["pages"]])
    return model.predict(pages, batch_size=8)


def main(queue, gpu_ids):
    # Devices are configured once, before the first job touches TensorFlow.
    setup_devices(gpu_ids)
    for job in queue:
        lines = run_job(job)
        print(job["id"], lines.shape)


if __name__ == "__main__":
    blank = np.zeros((48, 512, 1))
    main([
        {"id": "a", "model_path": "models/lines.keras", "pages": [blank]},
        {"id": "b", "model_path": "models/lines.keras", "pages": [blank]},
    ], gpu_ids=[0])
