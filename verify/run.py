"""Runs every verify pair (verify/GPUnnn/{bad,fixed}.py) on a real multi-GPU machine, each program
in a fresh interpreter with CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER unset (plus the pair's own
env), optionally under a launcher (torchrun), and compares what happened with expect.json.

usage: python3 verify/run.py [--out results.json] [--only GPU001,GPU004]
Prints a table and writes the results; exits 1 when a measurement contradicts expect.json.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run_program(rule_dir, name, spec):
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")}
    env.update(spec.get("env", {}))
    env["PYTHONPATH"] = HERE + os.pathsep + env.get("PYTHONPATH", "")
    path = os.path.join(rule_dir, name)
    launcher = spec.get("launcher")
    cmd = [sys.executable, "-m", "torch.distributed.run", *launcher, path] if launcher else [sys.executable, path]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=240, cwd=rule_dir)
    reports = []
    for line in p.stdout.splitlines():
        if line.startswith("{") and '"probe"' in line:
            reports.append(json.loads(line))
    return {"rc": p.returncode, "seconds": round(time.time() - t0, 1), "reports": reports, "stderr_tail": p.stderr[-600:]}


def check(result, want):
    """Compares one program's reports with its expectation; returns a list of problems."""
    problems = []
    reps = result["reports"]
    if not reps:
        return [f"no report (rc {result['rc']}): {result['stderr_tail'][-200:]}"]
    for key, value in want.items():
        if key in ("env", "launcher", "claim"):
            continue
        if key == "physical":
            got = [r["physical"] for r in reps]
            exp = value if value and isinstance(value[0], list) else [value] * len(reps)
            if sorted(map(str, got)) != sorted(map(str, exp)):
                problems.append(f"physical {got} != {exp}")
        elif key == "error_contains":
            errs = [r["error"] or "" for r in reps]
            text = " | ".join(errs) + " " + result["stderr_tail"]
            if value not in text:
                problems.append(f"error {errs} does not contain {value!r}")
        elif key == "no_error":
            errs = [r["error"] for r in reps if r["error"]]
            if errs:
                problems.append(f"unexpected error {errs}")
        elif key == "has_error":
            if not any(r["error"] for r in reps) and result["rc"] == 0:
                problems.append("expected an exception, none was raised")
        elif key == "physical_all":
            flat = sorted({g for r in reps if isinstance(r["physical"], list) for g in r["physical"]})
            if flat != value:
                problems.append(f"physical (all ranks) {flat} != {value}")
        elif key == "device_count":
            got = [r["device_count"] for r in reps]
            if any(g != value for g in got):
                problems.append(f"device_count {got} != {value}")
        elif key == "facts":
            for fk, fv in value.items():
                got = [r["facts"].get(fk) for r in reps]
                if any(g != fv for g in got):
                    problems.append(f"fact {fk} {got} != {fv}")
        elif key == "stderr_contains":
            if value not in result["stderr_tail"] and value not in json.dumps(reps):
                problems.append(f"stderr does not contain {value!r}")
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    only = [x for x in a.only.split(",") if x]
    rows, failed = [], 0
    for code in sorted(os.listdir(HERE)):
        rule_dir = os.path.join(HERE, code)
        if not code.startswith("GPU") or not os.path.isdir(rule_dir) or (only and code not in only):
            continue
        expect = json.load(open(os.path.join(rule_dir, "expect.json")))
        for variant in ("bad", "fixed"):
            res = run_program(rule_dir, f"{variant}.py", expect[variant])
            probs = check(res, expect[variant])
            failed += bool(probs)
            rows.append({"rule": code, "variant": variant, "claim": expect[variant].get("claim", ""), "ok": not probs, "problems": probs, **res})
            r0 = res["reports"][0] if res["reports"] else {}
            print(f"{code:7} {variant:5} {'ok  ' if not probs else 'FAIL'} physical={[r['physical'] for r in res['reports']]} "
                  f"count={r0.get('device_count')} error={r0.get('error')} {res['seconds']}s {'; '.join(probs)}", flush=True)
    env = {}
    try:
        import torch
        env["torch"] = torch.__version__
        env["cuda"] = torch.version.cuda
    except Exception as e:  # noqa: BLE001
        env["torch"] = f"unavailable: {e}"
    for mod in ("jax", "cupy"):
        try:
            env[mod] = __import__(mod).__version__
        except Exception as e:  # noqa: BLE001
            env[mod] = f"unavailable: {e}"
    env["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=index,name,driver_version", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip().splitlines()
    env["python"] = sys.version.split()[0]
    env["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    out = {"environment": env, "rows": rows, "passed": len(rows) - failed, "failed": failed}
    if a.out:
        json.dump(out, open(a.out, "w"), indent=1)
    print(f"{len(rows) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
