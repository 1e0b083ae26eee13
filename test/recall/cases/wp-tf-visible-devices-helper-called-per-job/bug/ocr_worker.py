import numpy as np
import tensorflow as tf

from device_setup import setup_devices


def run_job(job):
    setup_devices(job["gpus"])
    model = tf.keras.models.load_model(job["model_path"])
    pages = np.stack([np.asarray(p, dtype="float32") / 255.0 for p in job["pages"]])
    return model.predict(pages, batch_size=8)


def main(queue):
    # Jobs from the document pipeline run one after another in this process.
    for job in queue:
        lines = run_job(job)
        print(job["id"], lines.shape)


if __name__ == "__main__":
    blank = np.zeros((48, 512, 1))
    main([
        {"id": "a", "gpus": [0], "model_path": "models/lines.keras", "pages": [blank]},
        {"id": "b", "gpus": [0], "model_path": "models/lines.keras", "pages": [blank]},
    ])
