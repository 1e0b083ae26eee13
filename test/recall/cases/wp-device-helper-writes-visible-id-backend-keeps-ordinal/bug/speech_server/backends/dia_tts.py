"""Text-to-speech backend for the Dia dialogue model."""
import torch
from dia.model import Dia

from speech_server.config import Config
from speech_server.utils import parse_and_set_visible_devices


class DiaTTS:
    def __init__(self, cfg: Config):
        self._cfg = cfg
        self._model = None
        parse_and_set_visible_devices(cfg)

    def load(self):
        dtype = torch.float16 if self._cfg.device.startswith("cuda") else torch.float32
        self._model = Dia.from_pretrained(self._cfg.model, compute_dtype=dtype, device=torch.device(self._cfg.device))
        return self

    def speech(self, text: str):
        return self._model.generate(text)
