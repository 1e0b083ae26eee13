import os

from unsloth import FastLanguageModel
import torch
from datasets import load_dataset
from transformers import TrainingArguments
from trl import SFTTrainer

os.environ["CUDA_VISIBLE_DEVICES"] = "3"

model, tokenizer = FastLanguageModel.from_pretrained(
    model_name="unsloth/llama-3-8b-bnb-4bit",
    max_seq_length=2048,
    load_in_4bit=True,
)
model = FastLanguageModel.get_peft_model(model, r=16, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])

dataset = load_dataset("json", data_files="data/train.jsonl", split="train")
trainer = SFTTrainer(
    model=model,
    tokenizer=tokenizer,
    train_dataset=dataset,
    dataset_text_field="text",
    max_seq_length=2048,
    args=TrainingArguments(per_device_train_batch_size=2, max_steps=60, bf16=torch.cuda.is_bf16_supported(), output_dir="outputs"),
)
trainer.train()
