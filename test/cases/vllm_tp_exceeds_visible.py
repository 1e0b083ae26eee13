import os

os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
os.environ["CUDA_VISIBLE_DEVICES"] = "6,7"
from vllm import LLM, SamplingParams

llm = LLM(model="Qwen/Qwen2.5-0.5B", tensor_parallel_size=8)
print(llm.generate(["hi"], SamplingParams(max_tokens=4)))
