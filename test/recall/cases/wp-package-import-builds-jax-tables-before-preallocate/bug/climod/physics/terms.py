"""Physical tendencies: radiative relaxation toward a reference profile."""
from climod.physics.constants import RELAXATION_RATE, REFERENCE_PROFILE


def physics_tendencies(temperature):
    return -RELAXATION_RATE * (temperature - REFERENCE_PROFILE[:, None, None])
