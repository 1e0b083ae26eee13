"""Fine-tune a chat model with LoRA through the Seq2Seq trainer (one process per GPU under torchrun)."""
import sys

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModel, AutoTokenizer, Seq2SeqTrainer, Seq2SeqTrainingArguments


def main(data_dir: str, model_dir: str, config_file: str, *rest: str) -> None:
    deepspeed_config = rest[1] if len(rest) > 1 and rest[0] == "--deepspeed" else None
    tokenizer = AutoTokenizer.from_pretrained(model_dir, trust_remote_code=True)
    model = AutoModel.from_pretrained(model_dir, trust_remote_code=True, torch_dtype=torch.bfloat16)
    model = get_peft_model(model, LoraConfig(r=8, lora_alpha=32, task_type="CAUSAL_LM"))
    args = Seq2SeqTrainingArguments(
        output_dir="./output",
        per_device_train_batch_size=4,
        max_steps=3000,
        bf16=True,
        deepspeed=deepspeed_config,
    )
    trainer = Seq2SeqTrainer(model=model, args=args, tokenizer=tokenizer)
    trainer.train()


if __name__ == "__main__":
    main(*sys.argv[1:])
