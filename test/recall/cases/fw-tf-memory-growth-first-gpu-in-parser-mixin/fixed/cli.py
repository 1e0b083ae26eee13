"""Command line of a crystallography scaling tool built on TensorFlow Probability."""
import argparse
import os


class EnvironmentSettingsMixin(argparse.ArgumentParser):
    def parse_args(self, *args, **kwargs):
        parser = super().parse_args(*args, **kwargs)
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = "1" if parser.tf_debug else "3"

        import tensorflow as tf

        tf.random.set_seed(parser.seed)
        if parser.disable_gpu:
            tf.config.set_visible_devices([], "GPU")
        else:
            # one GPU per run: memory growth on it, the others hidden
            gpus = tf.config.list_physical_devices("GPU")
            try:
                gpu = gpus[parser.gpu_id]
                if not parser.disable_memory_growth:
                    tf.config.experimental.set_memory_growth(gpu, True)
                tf.config.set_visible_devices(gpu, "GPU")
            except IndexError:
                tf.config.set_visible_devices([], "GPU")
        return parser


class CliParser(EnvironmentSettingsMixin):
    def __init__(self):
        super().__init__(description="Scale and merge diffraction data.")
        self.add_argument("reflections", nargs="+")
        self.add_argument("--seed", type=int, default=1234)
        self.add_argument("--tf-debug", action="store_true")
        self.add_argument("--disable-gpu", action="store_true")
        self.add_argument("--disable-memory-growth", action="store_true")
        self.add_argument("--gpu-id", type=int, default=0)


def main():
    args = CliParser().parse_args()
    import tensorflow as tf

    x = tf.random.normal((len(args.reflections), 8))
    print("scaled", float(tf.reduce_sum(x)))


if __name__ == "__main__":
    main()
