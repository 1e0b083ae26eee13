import json

from transformers import pipeline

SEED_EXAMPLES = [
    {"text": "The battery lasts all day and charges fast.", "label": "positive"},
    {"text": "The screen cracked after one week.", "label": "negative"},
]

# synthesise new labelled examples with a local causal LM
generator = pipeline(
    "text-generation",
    model="EleutherAI/gpt-neo-1.3B",
    device=0,
)


def synthesise(label, n=8):
    shots = "\n".join(f"Review ({ex['label']}): {ex['text']}" for ex in SEED_EXAMPLES)
    prompt = f"{shots}\nReview ({label}):"
    outputs = generator(prompt, max_new_tokens=40, num_return_sequences=n, do_sample=True)
    return [{"text": o["generated_text"][len(prompt):].strip().split("\n")[0], "label": label} for o in outputs]


if __name__ == "__main__":
    rows = synthesise("positive") + synthesise("negative")
    with open("synthetic.jsonl", "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
