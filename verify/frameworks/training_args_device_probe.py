"""Measures what transformers' TrainingArguments does to the current CUDA device (GPU008's default
check; huggingface/transformers#23410), in fresh interpreters on whatever GPUs the machine has.

Each run records every torch.cuda.set_device call (wrapped, then passed through) while the
arguments are built, then `args.device`, `args.n_gpu` and `torch.cuda.current_device()`:
1. plain `TrainingArguments(output_dir=...)` without a launcher;
2. the same after `torch.cuda.set_device(0)` (a one-GPU machine cannot name device 1: the record of
   the arguments' own set_device call is what shows that an earlier choice is overridden);
3. `use_cpu=True`;
4. with LOCAL_RANK/RANK/WORLD_SIZE/MASTER_* of a one-process launch (the launcher path).

usage: python3 training_args_device_probe.py --out results.json
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

TIMEOUT_S = 240

CODE = r"""
import json, sys, tempfile
import torch
calls = []
_orig = torch.cuda.set_device
def _spy(d):
    calls.append(str(d))
    return _orig(d)
torch.cuda.set_device = _spy
if PRESET is not None:
    torch.cuda.set_device(PRESET)
    calls.clear()
import transformers
from transformers import TrainingArguments
args = TrainingArguments(output_dir=tempfile.mkdtemp(), report_to=[], **KW)
after_build = list(calls)
dev = str(args.device)
print(json.dumps({
    "transformers": transformers.__version__,
    "torch": torch.__version__,
    "device_count": torch.cuda.device_count(),
    "set_device_calls_while_building": after_build,
    "args_device": dev,
    "args_n_gpu": args.n_gpu,
    "current_device": torch.cuda.current_device() if torch.cuda.is_available() else None,
}))
"""


def run(preset, kw, env=None):
    e = dict(os.environ)
    e.update(env or {})
    code = CODE.replace("PRESET", repr(preset)).replace("KW", repr(kw))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=TIMEOUT_S)
    out = {"rc": p.returncode, "stderr_tail": p.stderr[-1500:]}
    try:
        out.update(json.loads(p.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        out["stdout_tail"] = p.stdout[-1500:]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    launch = {"LOCAL_RANK": "0", "RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29533"}
    res = {
        "plain": run(None, {}),
        "after_set_device_0": run(0, {}),
        "use_cpu": run(None, {"use_cpu": True}),
        "launcher_env_one_process": run(None, {}, launch),
    }
    print(json.dumps(res, indent=1))
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
