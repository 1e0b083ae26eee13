"""Run a 4-bit GPTQ model, with the Marlin kernel when every GPU we were given can run it."""
import torch
from gptqmodel import BACKEND, GPTQModel

MODEL_ID = "ModelCloud/Llama-3.2-1B-Instruct-gptqmodel-4bit-vortex-v2.5"

# Marlin needs compute capability 8.0 (Ampere) or newer on every GPU in use.
# The GPUs named in CUDA_VISIBLE_DEVICES are renumbered from 0 in this process,
# and device_count() already counts only them.
ampere = torch.cuda.device_count() > 0 and all(
    torch.cuda.get_device_capability(i)[0] >= 8 for i in range(torch.cuda.device_count())
)

backend = BACKEND.MARLIN if ampere else BACKEND.TORCH
model = GPTQModel.load(MODEL_ID, backend=backend)
tokens = model.generate("The three primary colours are")[0]
print(backend.value, model.tokenizer.decode(tokens))
