import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def train(cfg):
    # PYTORCH_CUDA_ALLOC_CONF is set by cli.py before torch is imported.
    tokenizer = AutoTokenizer.from_pretrained(cfg["base_model"])
    model = AutoModelForCausalLM.from_pretrained(cfg["base_model"], torch_dtype=torch.bfloat16).to("cuda")
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.get("learning_rate", 2e-5))

    batch = tokenizer(["hello world"] * cfg.get("micro_batch_size", 4), return_tensors="pt").to("cuda")
    for _ in range(cfg.get("max_steps", 10)):
        loss = model(**batch, labels=batch["input_ids"]).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    print("peak reserved:", torch.cuda.max_memory_reserved())
