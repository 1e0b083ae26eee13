import os

# use only the first four of the eight GPUs; the others belong to a colleague
os.environ["CUDA_VISIBLE_DEVICES"] = "0,1,2,3"

import torch
from accelerate import init_empty_weights, load_checkpoint_and_dispatch
from peft import LoraConfig, get_peft_model
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

BASE_DIR = "/models/chat-6b"

config = AutoConfig.from_pretrained(BASE_DIR, trust_remote_code=True)
tokenizer = AutoTokenizer.from_pretrained(BASE_DIR, trust_remote_code=True)
with init_empty_weights():
    model = AutoModelForCausalLM.from_config(config, trust_remote_code=True)
model = load_checkpoint_and_dispatch(model, BASE_DIR, device_map="auto", dtype=torch.float16)

lora = LoraConfig(r=8, lora_alpha=16, target_modules=["query_key_value"], lora_dropout=0.05)
model = get_peft_model(model, lora)

inputs = tokenizer("Hello, who are you?", return_tensors="pt").to("cuda:0")
print(tokenizer.decode(model.generate(**inputs, max_new_tokens=32)[0]))
