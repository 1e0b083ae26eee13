"""Supervised fine-tuning with the Hugging Face Trainer; torchrun starts one process per GPU."""
from dataclasses import dataclass, field

import transformers


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="bigscience/bloomz-560m")
    model_max_length: int = field(default=2048)


@dataclass
class DataArguments:
    data_path: str = field(default="data/instructions.json")


def main():
    parser = transformers.HfArgumentParser(
        (ModelArguments, DataArguments, transformers.TrainingArguments)
    )
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    tokenizer = transformers.AutoTokenizer.from_pretrained(
        model_args.model_name_or_path, model_max_length=model_args.model_max_length
    )
    trainer = transformers.Trainer(model=model, tokenizer=tokenizer, args=training_args)
    trainer.train()
    trainer.save_model(training_args.output_dir)


if __name__ == "__main__":
    main()
