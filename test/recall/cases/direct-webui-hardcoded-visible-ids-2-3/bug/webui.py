import os
os.environ["CUDA_VISIBLE_DEVICES"] = "2,3"
import argparse

import gradio as gr
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

parser = argparse.ArgumentParser()
parser.add_argument("--base-model-path", default="meta-llama/Llama-3.1-8B-Instruct")
parser.add_argument("--max-new-tokens", type=int, default=512)
args = parser.parse_args()

tokenizer = AutoTokenizer.from_pretrained(args.base_model_path)
model = AutoModelForCausalLM.from_pretrained(
    args.base_model_path,
    torch_dtype=torch.float16,
    low_cpu_mem_usage=True,
    device_map="auto",
).eval()


def chat(message, history):
    input_ids = tokenizer.apply_chat_template(
        [{"role": "user", "content": message}], add_generation_prompt=True, return_tensors="pt"
    ).cuda()
    with torch.no_grad():
        output = model.generate(input_ids, max_new_tokens=args.max_new_tokens)
    return tokenizer.decode(output[0, input_ids.shape[1]:], skip_special_tokens=True)


gr.ChatInterface(chat).launch(share=False)
