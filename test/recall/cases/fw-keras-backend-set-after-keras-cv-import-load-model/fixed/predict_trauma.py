"""Load the trained abdominal-trauma classifier and score a folder of CT slices."""
import os

# the backend must be chosen before keras_core (or keras_cv, which imports it) is loaded
os.environ["KERAS_BACKEND"] = "tensorflow"

import sys

import keras_cv
import keras_core as keras
import numpy as np
import pandas as pd
import tensorflow as tf


class Config:
    IMAGE_SIZE = [256, 256]
    BATCH_SIZE = 64
    MODEL_PATH = "checkpoints/trauma_efficientnet.keras"
    TARGET_COLS = ["bowel_injury", "extravasation_injury", "kidney_low", "liver_low", "spleen_low"]


def load_images(paths):
    images = [tf.image.resize(tf.io.decode_png(tf.io.read_file(p), channels=3), Config.IMAGE_SIZE) for p in paths]
    return np.stack([img.numpy() / 255.0 for img in images])


def main(image_dir):
    model = keras.models.load_model(Config.MODEL_PATH)
    paths = sorted(tf.io.gfile.glob(f"{image_dir}/*.png"))
    preds = model.predict(load_images(paths), batch_size=Config.BATCH_SIZE)
    pd.DataFrame(np.concatenate(preds, axis=1), columns=Config.TARGET_COLS, index=paths).to_csv("predictions.csv")
    print(f"scored {len(paths)} images with keras_cv {keras_cv.__version__}")


if __name__ == "__main__":
    main(sys.argv[1])
