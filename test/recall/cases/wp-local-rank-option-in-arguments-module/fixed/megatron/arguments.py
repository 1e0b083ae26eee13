"""Command-line arguments shared by every Megatron entry point."""
import argparse


def _add_training_args(parser):
    group = parser.add_argument_group(title="training")
    group.add_argument("--micro-batch-size", type=int, default=4)
    group.add_argument("--train-iters", type=int, default=1000)
    group.add_argument("--lr", type=float, default=1.5e-4)
    return parser


def _add_distributed_args(parser):
    group = parser.add_argument_group(title="distributed")
    group.add_argument("--tensor-model-parallel-size", type=int, default=1)
    group.add_argument("--distributed-backend", default="nccl", choices=["nccl", "gloo"])
    # torch.distributed.launch (torch >= 2.0) passes --local-rank; the deepspeed launcher --local_rank.
    group.add_argument("--local-rank", "--local_rank", dest="local_rank", type=int, default=None,
                       help="local rank passed from distributed launcher.")
    return parser


def parse_args(extra_args_provider=None):
    parser = argparse.ArgumentParser(description="Megatron arguments", allow_abbrev=False)
    parser = _add_training_args(parser)
    parser = _add_distributed_args(parser)
    if extra_args_provider is not None:
        parser = extra_args_provider(parser)
    return parser.parse_args()
