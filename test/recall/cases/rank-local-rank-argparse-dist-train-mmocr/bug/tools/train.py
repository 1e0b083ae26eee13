"""Train a text detector or recogniser from a config file (MMEngine runner)."""
import argparse
import os
import os.path as osp

from mmengine.config import Config, DictAction
from mmengine.runner import Runner


def parse_args():
    parser = argparse.ArgumentParser(description="Train a model")
    parser.add_argument("config", help="path of the training config")
    parser.add_argument("--work-dir", help="where logs and checkpoints go")
    parser.add_argument("--resume", action="store_true", help="resume from the latest checkpoint")
    parser.add_argument("--amp", action="store_true", help="mixed-precision training")
    parser.add_argument("--cfg-options", nargs="+", action=DictAction, help="override config entries")
    parser.add_argument(
        "--launcher", choices=["none", "pytorch", "slurm", "mpi"], default="none", help="job launcher"
    )
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()
    if "LOCAL_RANK" not in os.environ:
        os.environ["LOCAL_RANK"] = str(args.local_rank)
    return args


def main():
    args = parse_args()
    cfg = Config.fromfile(args.config)
    cfg.launcher = args.launcher
    if args.cfg_options is not None:
        cfg.merge_from_dict(args.cfg_options)
    if args.work_dir is not None:
        cfg.work_dir = args.work_dir
    elif cfg.get("work_dir", None) is None:
        cfg.work_dir = osp.join("./work_dirs", osp.splitext(osp.basename(args.config))[0])
    if args.amp:
        cfg.optim_wrapper.type = "AmpOptimWrapper"
    cfg.resume = args.resume

    runner = Runner.from_cfg(cfg)
    runner.train()


if __name__ == "__main__":
    main()
