"""Fine-tuning entry point: the main process prepares the data, the others wait for it."""
import torch

from state import ProcessState


def prepare_dataset(path):
    return torch.load(path) if path.endswith(".pt") else list(range(10_000))


def main():
    state = ProcessState()
    if not state.is_main_process:
        state.wait_for_everyone()
    dataset = prepare_dataset("data/train.pt")
    if state.is_main_process:
        state.wait_for_everyone()
    model = torch.nn.Linear(512, 512).to(state.device)
    print(f"process {state.process_index}: {len(dataset)} samples on {state.device}", model.weight.device)


if __name__ == "__main__":
    main()
