import json
import os

os.environ["CUDA_VISIBLE_DEVICES"] = "4,3"

import torch
from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer


class SearchTool:
    def __init__(self, corpus_path, embed_path, rerank_path):
        # Physical GPU 3 is the second id in CUDA_VISIBLE_DEVICES="4,3": cuda:1 here.
        self.device = torch.device("cuda:1" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(embed_path)
        self.model = AutoModel.from_pretrained(embed_path).to(self.device)
        self.rerank_tokenizer = AutoTokenizer.from_pretrained(rerank_path)
        self.rerank_model = AutoModelForSequenceClassification.from_pretrained(rerank_path).to(self.device)
        with open(corpus_path) as f:
            self.docs = json.load(f)

    def embed(self, texts):
        batch = self.tokenizer(texts, padding=True, truncation=True, return_tensors="pt").to(self.device)
        with torch.no_grad():
            return self.model(**batch).last_hidden_state[:, 0]

    def search(self, query, k=5):
        scores = self.embed([query]) @ self.embed(self.docs).T
        return [self.docs[i] for i in scores[0].topk(k).indices.tolist()]


if __name__ == "__main__":
    tool = SearchTool("data/docs.json", "models/bge-large-zh-v1.5", "models/bge-reranker-large")
    print(tool.search("如何申请发票"))
