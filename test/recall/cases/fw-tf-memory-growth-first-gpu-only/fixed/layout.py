import numpy as np
import tensorflow as tf


class LayoutAnalyzer:
    def __init__(self, model_dir):
        # Memory growth must be the same on every visible GPU.
        for gpu in tf.config.list_physical_devices("GPU"):
            tf.config.experimental.set_memory_growth(gpu, True)
        self.model = tf.keras.models.load_model(f"{model_dir}/region_model.h5", compile=False)

    def predict_regions(self, page):
        img = tf.image.resize(page[None, ...].astype("float32") / 255.0, (896, 896))
        probs = self.model.predict(img, verbose=0)[0]
        return np.argmax(probs, axis=-1)


if __name__ == "__main__":
    analyzer = LayoutAnalyzer("models")
    page = np.random.randint(0, 255, (2000, 1400, 3), dtype=np.uint8)
    print(np.bincount(analyzer.predict_regions(page).ravel()))
