"""Vision side of a multimodal model served by TensorRT-LLM's PyTorch backend.

Each tensor-parallel worker builds its own copy of the vision encoder; model_config.mapping
describes the worker's place in the parallel layout.
"""
import torch
from transformers import AutoConfig, AutoModel

from tensorrt_llm._torch.model_config import ModelConfig


class HCXVisionModel(torch.nn.Module):
    def __init__(self, model_config: ModelConfig):
        super().__init__()
        self.model_config = model_config
        self.pretrained_config = model_config.pretrained_config
        self.vision_config = self.pretrained_config.vision_config

        model_path = self.pretrained_config._name_or_path
        self.device = f"cuda:{torch.cuda.current_device()}"

        config = AutoConfig.from_pretrained(model_path, trust_remote_code=True)
        self.vision_tower = AutoModel.from_config(config.vision_config).to(self.device).eval()
        self.projector = torch.nn.Linear(
            self.vision_config.hidden_size, self.pretrained_config.text_config.hidden_size
        ).to(self.device)

    @torch.inference_mode()
    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        features = self.vision_tower(pixel_values.to(self.device)).last_hidden_state
        return self.projector(features)
