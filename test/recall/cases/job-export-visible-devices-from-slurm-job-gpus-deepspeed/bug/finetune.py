"""Supervised fine-tuning with the Hugging Face Trainer and a DeepSpeed ZeRO config."""
from dataclasses import dataclass, field

import transformers


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="facebook/opt-125m")


def main():
    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    trainer = transformers.Trainer(model=model, args=training_args)
    trainer.train()


if __name__ == "__main__":
    main()
