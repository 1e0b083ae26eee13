"""Measurement helper for GPU Pilot's verify pairs (issue 10), after ../shared/probes.

Import it FIRST in a verify program (it touches no GPU framework). At exit it prints one JSON line:
  {"probe": <program>, "rank": LOCAL_RANK or null, "pid": ..., "physical": [nvidia-smi indices this
   pid holds a context on], "device_count": torch.cuda.device_count() or null,
   "error": "ExceptionType: message" or null, "facts": {...}}
"physical" is read from `nvidia-smi --query-compute-apps` by pid (the only trustworthy answer,
ground-truth.md), so the program must still hold its CUDA context at exit (it does until the
interpreter ends; this atexit handler runs before).
"""
import atexit
import json
import os
import subprocess
import sys
import traceback

_state = {"error": None, "facts": {}}


def fact(key, value):
    """Records a measured value (printed with the report)."""
    _state["facts"][key] = value


def _hook(exc_type, exc, tb):
    _state["error"] = f"{exc_type.__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    traceback.print_exception(exc_type, exc, tb, file=sys.stderr)


def _physical():
    try:
        gpus = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid", "--format=csv,noheader"], capture_output=True, text=True, timeout=30).stdout
        index_of = {}
        for line in gpus.strip().splitlines():
            i, u = [x.strip() for x in line.split(",")]
            index_of[u] = int(i)
        apps = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,gpu_uuid", "--format=csv,noheader"], capture_output=True, text=True, timeout=30).stdout
        out = set()
        for line in apps.strip().splitlines():
            pid, u = [x.strip() for x in line.split(",")]
            if int(pid) == os.getpid() and u in index_of:
                out.add(index_of[u])
        return sorted(out)
    except Exception as e:  # noqa: BLE001 - a measurement must not hide the program's own result
        return f"unknown: {e}"


def _report():
    count = None
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            count = torch.cuda.device_count()
        except Exception as e:  # noqa: BLE001
            count = f"error: {e}"
    print(json.dumps({
        "probe": os.path.basename(sys.argv[0]), "rank": os.environ.get("LOCAL_RANK"), "pid": os.getpid(),
        "physical": _physical(), "device_count": count, "error": _state["error"], "facts": _state["facts"],
    }), flush=True)


sys.excepthook = _hook
atexit.register(_report)
