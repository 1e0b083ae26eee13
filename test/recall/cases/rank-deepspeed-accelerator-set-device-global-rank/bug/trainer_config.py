"""Trainer configuration. Validating it also binds the process to its GPU and joins the job."""
import deepspeed
from deepspeed.accelerator import get_accelerator
from pydantic import BaseModel, Field, model_validator
from typing_extensions import Self

from dist_env import get_global_rank, get_local_rank, get_world_size


class TrainerConfig(BaseModel):
    local_rank: int = Field(default_factory=get_local_rank, exclude=True)
    global_rank: int = Field(default_factory=get_global_rank, exclude=True)
    world_size: int = Field(default_factory=get_world_size, exclude=True)

    model_name_or_path: str = "meta-llama/Llama-3.1-8B"
    micro_batch_size: int = 1
    epochs: int = 1
    zero_stage: int = 3

    @model_validator(mode="after")
    def init_dist(self) -> Self:
        get_accelerator().set_device(self.global_rank)
        deepspeed.init_distributed()
        return self
