"""Does a pydantic BaseSettings env_file reach CUDA? Measured on any number of GPUs (GPU076).

A temporary folder holds ``local.env`` with ``CUDA_VISIBLE_DEVICES=-1`` (exported, it hides every
GPU: ``torch.cuda.device_count()`` is 0). In a fresh interpreter started there without the variable,
each variant builds its settings object (or loads the file), then records whether the variable is in
``os.environ``, the settings field's value where it has one, and ``torch.cuda.device_count()``:

- pydantic-settings (pydantic 2): ``model_config = SettingsConfigDict(env_file="local.env", extra="ignore")``;
- the same with a ``CUDA_VISIBLE_DEVICES: str`` field (the value reaches the field only);
- the ``_env_file="local.env"`` keyword;
- pydantic 1 style (``pydantic.v1.BaseSettings``, ``class Config: env_file = "local.env"``);
- the control: python-dotenv's ``load_dotenv("local.env")``, which exports it (count 0).

Variants whose library is missing record the ImportError. GPU076's claim holds where every settings
variant shows ``in_environ: false`` and the full GPU count, and the control shows 0.

usage: python3 verify/frameworks/settings_env_file_probe.py --out results.json
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

VARIANTS = {
    "pydantic_settings env_file": """
from pydantic_settings import BaseSettings, SettingsConfigDict
class S(BaseSettings):
    model_config = SettingsConfigDict(env_file="local.env", extra="ignore")
    batch: int = 1
s = S()
FIELD = None
""",
    "pydantic_settings env_file, field of the name": """
from pydantic_settings import BaseSettings, SettingsConfigDict
class S(BaseSettings):
    model_config = SettingsConfigDict(env_file="local.env", extra="ignore")
    CUDA_VISIBLE_DEVICES: str = "unset"
s = S()
FIELD = s.CUDA_VISIBLE_DEVICES
""",
    "pydantic_settings _env_file keyword": """
from pydantic_settings import BaseSettings, SettingsConfigDict
class S(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore")
    CUDA_VISIBLE_DEVICES: str = "unset"
s = S(_env_file="local.env")
FIELD = s.CUDA_VISIBLE_DEVICES
""",
    "pydantic v1 BaseSettings Config.env_file": """
from pydantic.v1 import BaseSettings
class S(BaseSettings):
    CUDA_VISIBLE_DEVICES: str = "unset"
    class Config:
        env_file = "local.env"
s = S()
FIELD = s.CUDA_VISIBLE_DEVICES
""",
    "control: dotenv.load_dotenv": """
from dotenv import load_dotenv
load_dotenv("local.env")
FIELD = None
""",
}

TAIL = """
import json, os
try:
    import torch
    COUNT = torch.cuda.device_count()
except ImportError:  # the environ answer stands without torch
    COUNT = None
print("@@RESULT " + json.dumps({
    "in_environ": "CUDA_VISIBLE_DEVICES" in os.environ,
    "environ_value": os.environ.get("CUDA_VISIBLE_DEVICES"),
    "field": FIELD,
    "device_count": COUNT,
}), flush=True)
"""


def run(code: str, cwd: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    p = subprocess.run([sys.executable, "-c", code + TAIL], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    for line in p.stdout.splitlines():
        if line.startswith("@@RESULT "):
            return json.loads(line[len("@@RESULT "):])
    return {"error": (p.stderr or p.stdout).strip().splitlines()[-1:] or ["no output"], "rc": p.returncode}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    out = {"python": sys.version.split()[0], "variants": {}}
    for name in ("torch", "pydantic", "pydantic_settings", "dotenv"):
        try:
            mod = __import__(name)
            out[name] = getattr(mod, "__version__", "?")
        except Exception as e:  # noqa: BLE001 - recorded
            out[name] = f"missing: {type(e).__name__}"
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "local.env"), "w") as f:
            f.write("CUDA_VISIBLE_DEVICES=-1\nbatch=4\n")
        baseline = run("FIELD = None\n", d)
        out["baseline"] = baseline
        for name, code in VARIANTS.items():
            out["variants"][name] = r = run(code, d)
            print(f"{name}: {r}", flush=True)
    print(json.dumps(out, indent=2))
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
