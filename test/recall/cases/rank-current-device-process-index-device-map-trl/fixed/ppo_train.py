"""PPO fine-tuning of an 8-bit model, one process per GPU (`accelerate launch ppo_train.py`)."""
from modeling_value_head import CausalLMWithValueHead


def main():
    model = CausalLMWithValueHead.from_pretrained("facebook/opt-1.3b", load_in_8bit=True)
    print("policy loaded on", model.current_device)


if __name__ == "__main__":
    main()
