"""Writes the CUDA selection variables this process was started with, as JSON.

Used by the end-to-end tests: `GPU Pilot: Run Active File on Selected GPUs` runs this file, and the
test reads $GPU_PILOT_E2E_OUT/probe_env.json (or .probe_env.json beside this file when the variable
did not reach the task).
"""
import json
import os

out_dir = os.environ.get("GPU_PILOT_E2E_OUT")
target = os.path.join(out_dir, "probe_env.json") if out_dir else os.path.join(os.path.dirname(os.path.abspath(__file__)), ".probe_env.json")
data = {k: os.environ.get(k) for k in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")}
tmp = target + ".tmp"
with open(tmp, "w") as f:
    json.dump(data, f)
os.replace(tmp, target)
print("probe_env:", json.dumps(data), "->", target)
