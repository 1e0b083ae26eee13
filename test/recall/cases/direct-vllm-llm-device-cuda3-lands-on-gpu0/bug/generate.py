"""Batch generation with vLLM on GPU 3 (GPU 0 is taken by another job's model)."""
import json

from vllm import LLM, SamplingParams

QUESTIONS = [
    "Explain in one sentence what a tokenizer does.",
    "Name three uses of a hash map.",
    "What is the boiling point of water at sea level?",
    "Summarise the plot of Hamlet in two sentences.",
]


def main():
    params = SamplingParams(temperature=0.7, top_p=0.9, max_tokens=128)
    llm = LLM(model="allenai/OLMo-1B-hf", device="cuda:3")
    results = llm.generate(QUESTIONS, params)
    with open("answers.jsonl", "w") as f:
        for out in results:
            f.write(json.dumps({"question": out.prompt, "answer": out.outputs[0].text}) + "\n")
    print(f"wrote {len(results)} answers")


if __name__ == "__main__":
    main()
