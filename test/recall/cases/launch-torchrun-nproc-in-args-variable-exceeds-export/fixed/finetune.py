"""LoRA fine-tuning of a vision-language chat model on conversation data."""
from dataclasses import dataclass, field

import transformers
from datasets import load_dataset
from peft import LoraConfig, get_peft_model
from transformers import AutoModel, AutoTokenizer, Trainer


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="openbmb/MiniCPM-Llama3-V-2_5")


@dataclass
class DataArguments:
    data_path: str = field(default="data/train.json")


def train():
    parser = transformers.HfArgumentParser((ModelArguments, DataArguments, transformers.TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path, trust_remote_code=True)
    model = AutoModel.from_pretrained(model_args.model_name_or_path, trust_remote_code=True)
    lora = LoraConfig(r=64, lora_alpha=64, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])
    model = get_peft_model(model, lora)
    dataset = load_dataset("json", data_files=data_args.data_path)["train"]
    trainer = Trainer(model=model, args=training_args, train_dataset=dataset, tokenizer=tokenizer)
    trainer.train()
    trainer.save_model(training_args.output_dir)


if __name__ == "__main__":
    train()
