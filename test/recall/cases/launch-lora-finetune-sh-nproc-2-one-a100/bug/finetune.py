"""LoRA fine-tuning; under torchrun each process loads the model on its own GPU."""
import os

import fire
import torch
import transformers
from peft import LoraConfig, get_peft_model


def train(base_model: str, data_path: str, output_dir: str, batch_size: int = 16,
          micro_batch_size: int = 1, num_epochs: int = 1, learning_rate: float = 3e-4,
          lora_r: int = 16, lora_alpha: int = 16, lora_dropout: float = 0.05, **_):
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    ddp = world_size != 1
    device_map = {"": int(os.environ.get("LOCAL_RANK") or 0)} if ddp else "auto"
    model = transformers.AutoModelForCausalLM.from_pretrained(
        base_model, torch_dtype=torch.float16, device_map=device_map
    )
    model = get_peft_model(model, LoraConfig(r=lora_r, lora_alpha=lora_alpha,
                                             lora_dropout=lora_dropout, task_type="CAUSAL_LM"))
    args = transformers.TrainingArguments(
        output_dir=output_dir,
        per_device_train_batch_size=micro_batch_size,
        gradient_accumulation_steps=max(1, batch_size // micro_batch_size // world_size),
        num_train_epochs=num_epochs,
        learning_rate=learning_rate,
        ddp_find_unused_parameters=False if ddp else None,
    )
    transformers.Trainer(model=model, args=args).train()
    model.save_pretrained(output_dir)


if __name__ == "__main__":
    fire.Fire(train)
