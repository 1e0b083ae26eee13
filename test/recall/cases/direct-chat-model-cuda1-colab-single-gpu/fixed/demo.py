"""Answer questions about a folder of text files: embed, retrieve, then ask a local chat model."""
import glob

import torch
from sentence_transformers import SentenceTransformer, util
from transformers import AutoModel, AutoTokenizer

EMBED_MODEL = "shibing624/text2vec-base-chinese"
CHAT_MODEL = "THUDM/chatglm-6b"

embedder = SentenceTransformer(EMBED_MODEL, device="cuda:0")
tokenizer = AutoTokenizer.from_pretrained(CHAT_MODEL, trust_remote_code=True)
chat_model = AutoModel.from_pretrained(CHAT_MODEL, trust_remote_code=True).half().cuda(0)
chat_model.eval()

docs = [open(p, encoding="utf-8").read() for p in sorted(glob.glob("docs/*.txt"))]
doc_vecs = embedder.encode(docs, convert_to_tensor=True)


def answer(question, top_k=3):
    q_vec = embedder.encode(question, convert_to_tensor=True)
    hits = util.semantic_search(q_vec, doc_vecs, top_k=top_k)[0]
    context = "\n".join(docs[h["corpus_id"]] for h in hits)
    prompt = f"Answer from these notes only:\n{context}\n\nQuestion: {question}"
    with torch.no_grad():
        reply, _ = chat_model.chat(tokenizer, prompt, history=[])
    return reply


if __name__ == "__main__":
    print(answer("What does the warranty cover?"))
