import os

# ROCR keeps physical GPUs 4 and 5; HIP then numbers those 0 and 1.
os.environ["ROCR_VISIBLE_DEVICES"] = "4,5"
os.environ["HIP_VISIBLE_DEVICES"] = "5"
import torch

print(torch.cuda.device_count())
