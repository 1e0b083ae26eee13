import os

# The generator gets the second vGPU; the first one serves another tenant.
# Set before torch (or llama.cpp) touches CUDA: the value is read once per process.
os.environ["CUDA_VISIBLE_DEVICES"] = "1"

import torch
from llama_cpp import Llama
from sentence_transformers import SentenceTransformer

EMBED_ON_GPU = torch.cuda.is_available()
embedder = SentenceTransformer("BAAI/bge-small-en-v1.5", device="cpu")

llm = Llama(model_path="models/mistral-7b-instruct.Q4_K_M.gguf", n_gpu_layers=-1, n_ctx=4096)


def answer(question, passages):
    context = "\n".join(passages)
    out = llm(f"Context:\n{context}\n\nQuestion: {question}\nAnswer:", max_tokens=256, stop=["\n\n"])
    return out["choices"][0]["text"].strip()


if __name__ == "__main__":
    docs = ["The cluster has two vGPUs.", "Tenant A uses the first vGPU."]
    print(embedder.encode(docs).shape, EMBED_ON_GPU)
    print(answer("Which vGPU does tenant A use?", docs))
