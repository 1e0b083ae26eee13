import torch
from docarray import DocumentArray
from jina import Executor, requests
from transformers import AutoModel, AutoTokenizer


class TextEncoder(Executor):
    def __init__(self, model_name="sentence-transformers/all-MiniLM-L6-v2", **kwargs):
        super().__init__(**kwargs)
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.tokenizer = AutoTokenizer.from_pretrained(model_name)
        self.model = AutoModel.from_pretrained(model_name).to(self.device).eval()

    @requests
    def encode(self, docs: DocumentArray, **kwargs):
        batch = self.tokenizer(docs.texts, padding=True, truncation=True, return_tensors="pt").to(self.device)
        with torch.no_grad():
            docs.embeddings = self.model(**batch).last_hidden_state.mean(dim=1).cpu().numpy()
