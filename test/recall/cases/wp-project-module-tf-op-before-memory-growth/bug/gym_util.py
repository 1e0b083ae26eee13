import numpy as np


def get_spec(space_shape, dtype="float32"):
    size = int(np.prod(space_shape))
    return {"event_shape": tuple(space_shape), "event_size": size, "dtype": dtype}


def space_to_feat(obs):
    return np.asarray(obs, dtype=np.float32).reshape(1, -1)
