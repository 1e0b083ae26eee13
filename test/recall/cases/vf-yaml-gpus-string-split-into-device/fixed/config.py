import yaml
from easydict import EasyDict as edict

config = edict()
config.OUTPUT_DIR = "output"
config.GPUS = "0,1"
config.WORKERS = 8
config.PRINT_FREQ = 100

config.DATASET = edict()
config.DATASET.ROOT = "data/Panoptic"
config.DATASET.CAMERA_NUM = 5

config.CAPTURE_SPEC = edict()
config.CAPTURE_SPEC.SPACE_SIZE = [8000.0, 8000.0, 2000.0]
config.CAPTURE_SPEC.VOXELS_PER_AXIS = [80, 80, 20]

config.TRAIN = edict()
config.TRAIN.BATCH_SIZE = 1
config.TRAIN.LR = 1e-4
config.TRAIN.END_EPOCH = 10


def update_config(config_file):
    with open(config_file) as handle:
        exp_config = edict(yaml.safe_load(handle))
    for key, value in exp_config.items():
        if key not in config:
            raise ValueError(f"{key} is not a known config key")
        if isinstance(value, dict):
            config[key].update(value)
        else:
            config[key] = value
