"""Helpers shared by the speech backends."""
import logging
import os

from speech_server.config import Config

logger = logging.getLogger(__name__)


def parse_and_set_visible_devices(cfg: Config):
    """Read a device given as cuda:N and make GPU N the one this process sees.

    Once only GPU N is visible, CUDA numbers it 0: the backends must then use cuda:0.
    """
    if cfg.device.startswith("cuda:"):
        index = cfg.device.split(":")[1]
        if not index.isdigit():
            raise ValueError(f"invalid CUDA device index: {index}")
        os.environ["CUDA_VISIBLE_DEVICES"] = index
        cfg.device = "cuda:0"
        logger.info("Set CUDA_VISIBLE_DEVICES = %s, device cuda:0", index)
