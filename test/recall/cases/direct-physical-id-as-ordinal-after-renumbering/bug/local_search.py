"""Retrieval + rerank over a local document store, before asking the chat model."""
import os

os.environ["CUDA_VISIBLE_DEVICES"] = "4,3"

import torch
from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer

EMBED_DEVICE = torch.device("cuda:3" if torch.cuda.is_available() else "cpu")

tokenizer = AutoTokenizer.from_pretrained("BAAI/bge-large-zh-v1.5")
embedder = AutoModel.from_pretrained("BAAI/bge-large-zh-v1.5").to(EMBED_DEVICE)
rerank_tokenizer = AutoTokenizer.from_pretrained("BAAI/bge-reranker-large")
reranker = AutoModelForSequenceClassification.from_pretrained("BAAI/bge-reranker-large").to(EMBED_DEVICE)


def embed(texts):
    batch = tokenizer(texts, padding=True, truncation=True, return_tensors="pt").to(EMBED_DEVICE)
    with torch.no_grad():
        return embedder(**batch).last_hidden_state[:, 0]
