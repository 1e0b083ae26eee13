"""Fine-tune a small classifier on the second GPU of a shared workstation."""
import torch
from datasets import load_dataset
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    Trainer,
    TrainingArguments,
)

torch.cuda.set_device(1)  # GPU 0 is busy with someone else's job

tokenizer = AutoTokenizer.from_pretrained("distilbert-base-uncased")
model = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased", num_labels=2)
data = load_dataset("imdb", split="train[:2000]")
data = data.map(lambda b: tokenizer(b["text"], truncation=True, padding="max_length"), batched=True)

args = TrainingArguments(output_dir="out/", per_device_train_batch_size=16, num_train_epochs=1)
print("training on", args.device, "current device", torch.cuda.current_device())
trainer = Trainer(model=model, args=args, train_dataset=data)
trainer.train()
