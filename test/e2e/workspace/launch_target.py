"""Records how it was started, as JSON, for the run e2e tests (test/e2e/suite/run.test.ts).

Run with the python launcher, it writes {"launcher": "python", "argv": sys.argv, "env": {...}} to
the file named by $GPU_PILOT_LAUNCH_RECORD (the stand-in launchers in test/fixtures/bin/launchers
write the same shape for themselves). Nothing here reads LOCAL_RANK or sets CUDA_VISIBLE_DEVICES, so
no run check asks anything.
"""
import json
import os
import sys


def main():
    data = {
        "launcher": "python",
        "argv": sys.argv,
        "cwd": os.getcwd(),
        "env": {k: os.environ.get(k) for k in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")},
    }
    target = os.environ.get("GPU_PILOT_LAUNCH_RECORD")
    if target:
        tmp = target + ".py.tmp"
        with open(tmp, "w") as f:
            json.dump(data, f)
        os.replace(tmp, target)
    print("launch_target:", json.dumps(data))


if __name__ == "__main__":
    main()
