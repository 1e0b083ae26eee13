"""Settings of one model instance, filled from the command line."""
from dataclasses import dataclass


@dataclass
class Config:
    model: str
    device: str = "cpu"
    host: str = "0.0.0.0"
    port: int = 8080
