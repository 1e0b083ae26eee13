# Interleaved whole-process timing of GPU Pilot's CLI against native Ruff 0.16.9 (E4,E7,E9,F, as in
# BENCHMARKS.md) on 1, 4 and 16 copies of python3-torch (hard links), with the worker-thread counts
# below; wall and CPU (children's rusage) per run, medians. Made for a machine with more cores than
# this one: bench/cli-cores-bundle.sh packs what it needs.
# usage: python3 bench/cli-cores.py BUNDLE_DIR OUT.json [OTHER_CLI_JS]
import os, subprocess, sys, time, json, statistics, shutil
B = sys.argv[1]  # unpacked bundle dir
out = sys.argv[2]
node, ruff, cli = f"{B}/node", f"{B}/ruff", f"{B}/cli/cli.js"
def tree(n):
    d = f"/tmp/corpus{n}"
    if not os.path.isdir(d):
        os.makedirs(d)
        for i in range(n):
            subprocess.run(["cp", "-al", f"{B}/torchcorpus", f"{d}/copy{i}"], check=True)
    return d
def run(cmd, env=None):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read().decode()[-300:]
    wall = time.perf_counter() - t0
    assert os.waitstatus_to_exitcode(status) == 0, (cmd, err)
    return wall, ru.ru_utime + ru.ru_stime
res = {"cpus": os.cpu_count(), "load_before": os.getloadavg()}
newcli = sys.argv[3] if len(sys.argv) > 3 else cli
cmds = {
  "ruff": lambda d: [ruff, "check", "--no-cache", "--select", "E4,E7,E9,F", "--isolated", "--exit-zero", "-q", d],
  "gp": lambda d: [node, cli, "check", "--no-cache", "--exit-zero", d],
  "new": lambda d: [node, newcli, "check", "--no-cache", "--exit-zero", d],
}
variants = [("ruff", None), ("gp", None)]
for n, rounds in ((1, 9), (4, 5), (16, 5)):
    d = tree(n)
    vs = list(variants) + [("new", None)] + ([("new", "8")] if n == 1 else [])
    for name, w in vs:  # warm-up (page cache, compile cache)
        env = dict(os.environ, **({"GPU_PILOT_WORKERS": w} if w else {}))
        run(cmds[name](d), env)
    rows = {f"{name}{'-w'+w if w else ''}": [] for name, w in vs}
    for r in range(rounds):
        order = vs if r % 2 == 0 else list(reversed(vs))
        for name, w in order:
            env = dict(os.environ, **({"GPU_PILOT_WORKERS": w} if w else {}))
            rows[f"{name}{'-w'+w if w else ''}"].append(run(cmds[name](d), env))
    res[f"copies{n}"] = {k: {"wall_med": statistics.median(x[0] for x in v), "cpu_med": statistics.median(x[1] for x in v), "walls": [round(x[0],3) for x in v]} for k, v in rows.items()}
    print(n, json.dumps(res[f"copies{n}"]), flush=True)
res["load_after"] = os.getloadavg()
json.dump(res, open(out, "w"), indent=1)
