"""DreamBooth fine-tuning with ColossalAI (Gemini); colossalai run starts one process per GPU."""
import argparse

import colossalai
import torch
from colossalai.utils import get_current_device


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrained_model_name_or_path", required=True)
    parser.add_argument("--instance_data_dir", required=True)
    parser.add_argument("--output_dir", default="dreambooth-model")
    return parser.parse_args()


def main(args):
    colossalai.launch_from_torch(config={})
    device = get_current_device()
    print("training on", device, "with", torch.cuda.device_count(), "visible GPU(s)")


if __name__ == "__main__":
    main(parse_args())
