"""Generation latency benchmark; Hydra composes each experiment from configs/*.yaml.

Run: python benchmark.py --config-name gpt2_2gpu
"""
import time

import hydra
import torch
from omegaconf import DictConfig, OmegaConf
from optimum.exporters import TasksManager
from transformers import AutoModelForCausalLM, AutoTokenizer

# the task is inferred from the Hub metadata when the config is resolved
OmegaConf.register_new_resolver("infer_task", lambda model: TasksManager.infer_task_from_model(model))


@hydra.main(version_base=None, config_path="configs", config_name="gpt2_2gpu")
def run_experiment(cfg: DictConfig) -> None:
    print(f"{cfg.experiment_name} ({cfg.task}): {torch.cuda.device_count()} visible GPU(s)")
    tokenizer = AutoTokenizer.from_pretrained(cfg.model)
    model = AutoModelForCausalLM.from_pretrained(cfg.model, device_map=cfg.device_map)
    prompts = ["The quick brown fox"] * cfg.batch_size
    inputs = tokenizer(prompts, return_tensors="pt").to(model.device)

    latencies = []
    for _ in range(cfg.repeats):
        start = time.perf_counter()
        model.generate(**inputs, max_new_tokens=cfg.new_tokens, min_new_tokens=cfg.new_tokens)
        torch.cuda.synchronize()
        latencies.append(time.perf_counter() - start)
    print(f"mean latency {sum(latencies) / len(latencies):.3f}s on {model.hf_device_map}")


if __name__ == "__main__":
    run_experiment()
