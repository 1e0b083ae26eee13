# Issue 18 item 7: os.putenv takes bytes, os.environ does not: the safe fix raised TypeError.
import os
os.putenv(b"CUDA_VISIBLE_DEVICES", b"1")
import torch
