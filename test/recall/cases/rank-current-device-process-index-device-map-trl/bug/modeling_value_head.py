"""A causal LM with a scalar value head, for PPO training under `accelerate launch`."""
import torch
import torch.nn as nn
from accelerate import Accelerator
from transformers import AutoModelForCausalLM


class CausalLMWithValueHead(nn.Module):
    def __init__(self, pretrained_model):
        super().__init__()
        self.pretrained_model = pretrained_model
        self.v_head = nn.Linear(pretrained_model.config.hidden_size, 1)

    @classmethod
    def _get_current_device(cls):
        """The device this process loads its copy of the model on."""
        accelerator = Accelerator()
        return accelerator.process_index if torch.cuda.is_available() else "cpu"

    @classmethod
    def from_pretrained(cls, model_name_or_path, **kwargs):
        current_device = cls._get_current_device()
        quantized = kwargs.get("load_in_8bit", False) or kwargs.get("load_in_4bit", False)
        if quantized and "device_map" not in kwargs:
            # A quantized model cannot be moved after loading: place it on this process's GPU now.
            kwargs["device_map"] = {"": current_device}
        base = AutoModelForCausalLM.from_pretrained(model_name_or_path, **kwargs)
        model = cls(base)
        model.current_device = current_device
        return model

    def forward(self, input_ids, attention_mask=None):
        out = self.pretrained_model(input_ids, attention_mask=attention_mask, output_hidden_states=True)
        values = self.v_head(out.hidden_states[-1]).squeeze(-1)
        return out.logits, values
