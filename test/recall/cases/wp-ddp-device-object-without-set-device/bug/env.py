"""Process-wide settings read once at import."""
import os

import torch

LOCAL_RANK = int(os.environ.get("LOCAL_RANK", 0))
DEVICE = torch.device(f"cuda:{LOCAL_RANK}") if torch.cuda.is_available() else torch.device("cpu")
