"""Full-parameter supervised fine-tuning; the deepspeed launcher starts one process per GPU."""
import json
from dataclasses import dataclass, field

import torch
from transformers import (AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling,
                          HfArgumentParser, Trainer, TrainingArguments)


@dataclass
class DataArguments:
    model_name_or_path: str = field(default="meta-llama/Llama-2-7b-hf")
    dataset_path: str = field(default="data/alpaca_gpt4_en.json")
    cutoff_len: int = field(default=1024)


def main():
    data_args, training_args = HfArgumentParser((DataArguments, TrainingArguments)).parse_args_into_dataclasses()
    print(f"rank {training_args.local_rank} on {training_args.device}")
    tokenizer = AutoTokenizer.from_pretrained(data_args.model_name_or_path)
    tokenizer.pad_token = tokenizer.eos_token
    with open(data_args.dataset_path) as f:
        records = json.load(f)
    texts = [r["instruction"] + "\n" + r["output"] for r in records]
    dataset = [tokenizer(t, truncation=True, max_length=data_args.cutoff_len) for t in texts]
    model = AutoModelForCausalLM.from_pretrained(data_args.model_name_or_path, torch_dtype=torch.float16)
    trainer = Trainer(model=model, args=training_args, train_dataset=dataset,
                      data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False))
    trainer.train()
    trainer.save_model()


if __name__ == "__main__":
    main()
