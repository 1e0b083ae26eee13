"""GRPO training on math problems: reward 1 when the boxed answer matches the solution."""
import re
from dataclasses import dataclass

from datasets import load_dataset
from trl import GRPOConfig, GRPOTrainer, ModelConfig, TrlParser


@dataclass
class ScriptArguments:
    dataset_name: str = "DigitalLearningGmbH/MATH-lighteval"
    dataset_split: str = "train"


def boxed(text):
    found = re.findall(r"\\boxed\{([^{}]*)\}", text)
    return found[-1].strip() if found else None


def accuracy_reward(completions, solution, **kwargs):
    return [1.0 if boxed(c) is not None and boxed(c) == boxed(s) else 0.0 for c, s in zip(completions, solution)]


def main(script_args, training_args, model_args):
    dataset = load_dataset(script_args.dataset_name, split=script_args.dataset_split)
    dataset = dataset.map(lambda row: {"prompt": row["problem"] + "\nPut the final answer in \\boxed{}."})
    training_args.model_init_kwargs = {"torch_dtype": model_args.torch_dtype,
                                       "attn_implementation": model_args.attn_implementation}
    trainer = GRPOTrainer(
        model=model_args.model_name_or_path,
        reward_funcs=[accuracy_reward],
        args=training_args,
        train_dataset=dataset,
    )
    trainer.train()
    trainer.save_model(training_args.output_dir)


if __name__ == "__main__":
    parser = TrlParser((ScriptArguments, GRPOConfig, ModelConfig))
    main(*parser.parse_args_and_config())
