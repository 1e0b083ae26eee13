"""Process-group and device set-up."""
import os

import torch
import torch.distributed as dist

from megatron.arguments import parse_args

_ARGS = None


def initialize_megatron(extra_args_provider=None):
    global _ARGS
    _ARGS = parse_args(extra_args_provider)
    if _ARGS.local_rank is None:
        _ARGS.local_rank = int(os.getenv("LOCAL_RANK", "0"))
    torch.cuda.set_device(_ARGS.local_rank)
    dist.init_process_group(backend=_ARGS.distributed_backend)
    return _ARGS


def get_args():
    return _ARGS
