"""Table-producing probe for issue 21: which framework calls freeze CUDA's startup variables, how
the allocator variables are read, what JAX/Keras do with their variables. Runs on ONE GPU.

Every case runs in a fresh interpreter (python -c). Freeze method for a call C: run C, then set
CUDA_VISIBLE_DEVICES='' in os.environ, then allocate a tensor on cuda. If the allocation works, C
froze the CUDA variables (the runtime had already read them): "frozen"; if it fails (0 devices), C
did not: "lazy". The allocator cases write an unknown option ("bogus_option:1") or
"expandable_segments:True" after C and look whether the first CUDA use rejects or applies it.

usage: python3 verify/frameworks/probe.py --out results.json [--jax-path DIR] [--only torch,alloc,cvd,pyg,jax,keras]
Prints one line per case; writes {"environment": ..., "cases": [...]} (verify/results-frameworks-*.json).
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time

MARK = "@@RESULT "

# (id, call source) : the call whose freezing we measure. `torch` is imported before the call.
TORCH_CALLS = [
    ("import torch", "pass"),
    ("tensor", "torch.ones(1, device='cuda')"),
    # engine TORCH_CUDA_INIT
    ("cuda.is_available", "torch.cuda.is_available()"),
    ("cuda.is_bf16_supported", "torch.cuda.is_bf16_supported()"),
    ("cuda.get_arch_list", "torch.cuda.get_arch_list()"),
    ("cuda.get_device_name", "torch.cuda.get_device_name(0)"),
    ("cuda.get_device_properties", "torch.cuda.get_device_properties(0)"),
    ("cuda.get_device_capability", "torch.cuda.get_device_capability(0)"),
    ("cuda.init", "torch.cuda.init()"),
    ("cuda.current_device", "torch.cuda.current_device()"),
    ("cuda.get_gencode_flags", "torch.cuda.get_gencode_flags()"),
    ("cuda.set_device", "torch.cuda.set_device(0)"),
    ("cuda.mem_get_info", "torch.cuda.mem_get_info()"),
    ("cuda.synchronize", "torch.cuda.synchronize()"),
    ("cuda.Stream", "torch.cuda.Stream()"),
    ("cuda.Event", "torch.cuda.Event()"),
    ("cuda.device", "exec('with torch.cuda.device(0):\\n    pass')"),
    ("cuda.set_per_process_memory_fraction", "torch.cuda.set_per_process_memory_fraction(0.5)"),
    ("cuda.ipc_collect", "torch.cuda.ipc_collect()"),
    ("cuda.stream", "exec('with torch.cuda.stream(torch.cuda.Stream()):\\n    pass')"),
    # engine TORCH_CUDA_LAZY
    ("cuda.device_count", "torch.cuda.device_count()"),
    ("cuda.manual_seed", "torch.cuda.manual_seed(0)"),
    ("cuda.manual_seed_all", "torch.cuda.manual_seed_all(0)"),
    ("cuda.seed", "torch.cuda.seed()"),
    ("cuda.seed_all", "torch.cuda.seed_all()"),
    ("cuda.memory_allocated", "torch.cuda.memory_allocated()"),
    ("cuda.empty_cache", "torch.cuda.empty_cache()"),
    ("cuda.is_initialized", "torch.cuda.is_initialized()"),
    ("cuda.max_memory_allocated", "torch.cuda.max_memory_allocated()"),
    ("cuda.memory_reserved", "torch.cuda.memory_reserved()"),
    # issue 21
    ("accelerator.is_available", "torch.accelerator.is_available()"),
    ("accelerator.current_device_index", "torch.accelerator.current_device_index()"),
    ("accelerator.device_count", "torch.accelerator.device_count()"),
    ("accelerator.current_accelerator", "torch.accelerator.current_accelerator()"),
    ("accelerator.set_device_index", "torch.accelerator.set_device_index(0)"),
    ("accelerator.synchronize", "torch.accelerator.synchronize()"),
    ("__config__.show", "torch.__config__.show()"),
    ("backends.cudnn.version", "torch.backends.cudnn.version()"),
    ("backends.cudnn.is_available", "torch.backends.cudnn.is_available()"),
    ("cuda.current_stream", "torch.cuda.current_stream()"),
    ("cuda.get_rng_state", "torch.cuda.get_rng_state()"),
]

# (id, extra env, call) measured like TORCH_CALLS
TORCH_ENV_CASES = [
    ("cuda.is_available+PYTORCH_NVML_BASED_CUDA_CHECK=1", {"PYTORCH_NVML_BASED_CUDA_CHECK": "1"}, "torch.cuda.is_available()"),
    ("import torch+KINETO_USE_DAEMON=1", {"KINETO_USE_DAEMON": "1"}, "pass"),
]

IMPORTS = ["torch_geometric", "lightning", "pytorch_lightning", "transformers", "accelerate", "sentence_transformers",
           "cupy", "triton", "torchvision", "torchmetrics", "torchaudio", "timm", "diffusers", "peft", "deepspeed",
           "flash_attn", "xformers", "bitsandbytes", "vllm"]

# The end of the freeze and import probes: hide every GPU, then allocate; the allocation works only
# if CUDA_VISIBLE_DEVICES was frozen by what ran before (the method of issue 21).
FROZEN_AFTER = r'''if "missing" not in R:
    import torch
    R["is_initialized_after_call"] = torch.cuda.is_initialized()
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    try:
        torch.ones(1, device="cuda")
        R["frozen"] = True
    except BaseException as e:
        R["frozen"] = False
        R["alloc_error"] = (type(e).__name__ + ": " + (str(e).splitlines() or [""])[0])[:200]
print("@@RESULT " + json.dumps(R), flush=True)
'''

FREEZE_TEMPLATE = r'''
import os, sys, json
R = {}
try:
    import torch
    __CALL__
except ImportError as e:
    R["missing"] = str(e)[:200]
except BaseException as e:
    R["call_error"] = type(e).__name__ + ": " + str(e).splitlines()[0][:200] if str(e) else type(e).__name__
''' + FROZEN_AFTER

IMPORT_TEMPLATE = r'''
import os, sys, json
R = {}
try:
    import __MOD__ as _m
    R["version"] = str(getattr(_m, "__version__", "?"))
except BaseException as e:
    R["missing"] = (type(e).__name__ + ": " + (str(e).splitlines() or [""])[0])[:200]
''' + FROZEN_AFTER

# Allocator: write VAR=VALUE after CALL (or before import when CALL is None), then use CUDA.
ALLOC_TEMPLATE = r'''
import os, sys, json
R = {}
if __BEFORE__:
    os.environ["__VAR__"] = "__VALUE__"
import torch
try:
    __CALL__
    if not __BEFORE__:
        os.environ["__VAR__"] = "__VALUE__"
    x = torch.empty(30 * 2**20, dtype=torch.uint8, device="cuda")
    R["backend"] = torch.cuda.get_allocator_backend()
    R["reserved_mb"] = torch.cuda.memory_reserved() / 2**20
    try:
        segs = torch.cuda.memory._snapshot()["segments"]
        R["expandable"] = any(bool(s.get("is_expandable")) for s in segs)
    except BaseException as e:
        R["expandable"] = "unknown: " + str(e)[:100]
    R["error"] = None
except BaseException as e:
    R["error"] = (type(e).__name__ + ": " + (str(e).splitlines() or [""])[0])[:240]
print("@@RESULT " + json.dumps(R), flush=True)
'''

ALLOC_POINTS = [
    ("before import torch", None),
    ("after import torch", "pass"),
    ("after cuda.is_available", "torch.cuda.is_available()"),
    ("after cuda.device_count", "torch.cuda.device_count()"),
    ("after cuda.get_device_name", "torch.cuda.get_device_name(0)"),
    ("after accelerator.current_device_index", "torch.accelerator.current_device_index()"),
    ("after tensor", "torch.ones(1, device='cuda')"),
]
ALLOC_VALUES = ["bogus_option:1", "expandable_segments:True", "backend:cudaMallocAsync"]
ALLOC_VARS = ["PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"]

CVD_VALUES = ["[0, 1]", "[0]", "1,1", "0,0", "0, 0", "0,1", "0 # c", "0x,0", "0,GPU-bogus", "", "(0)", "'0'", "0;1", "GPU-__UUID8__", "__UUID__"]

JAX_TEMPLATE = r'''
import os, sys, json, warnings, io
R = {}
warnings.simplefilter("always")
try:
__BODY__
except BaseException as e:
    R["error"] = (type(e).__name__ + ": " + (str(e).splitlines() or [""])[0])[:300]
print("@@RESULT " + json.dumps(R, default=str), flush=True)
'''

JAX_CASES = [
    ("version", {}, "import jax, jaxlib\nR['jax'] = jax.__version__\nR['jaxlib'] = jaxlib.__version__\nR['platform'] = jax.devices()[0].platform"),
    ("JAX_PLATFORMS=gpu", {"JAX_PLATFORMS": "gpu"}, "import jax\nR['platform'] = jax.devices()[0].platform"),
    ("JAX_PLATFORMS=cuda", {"JAX_PLATFORMS": "cuda"}, "import jax\nR['platform'] = jax.devices()[0].platform"),
    ("JAX_PLATFORMS=cuda,cpu", {"JAX_PLATFORMS": "cuda,cpu"}, "import jax\nR['platform'] = jax.devices()[0].platform"),
    ("default mem limit", {}, "import jax\nR['bytes_limit'] = jax.devices()[0].memory_stats()['bytes_limit']\nR['total'] = jax.devices()[0].memory_stats().get('bytes_limit')"),
    ("XLA_PYTHON_CLIENT_MEM_FRACTION=.25", {"XLA_PYTHON_CLIENT_MEM_FRACTION": ".25"}, "import jax\nR['bytes_limit'] = jax.devices()[0].memory_stats()['bytes_limit']"),
    ("XLA_CLIENT_MEM_FRACTION=.25", {"XLA_CLIENT_MEM_FRACTION": ".25"}, "import jax\nR['bytes_limit'] = jax.devices()[0].memory_stats()['bytes_limit']"),
    ("both fractions .25/.5", {"XLA_PYTHON_CLIENT_MEM_FRACTION": ".25", "XLA_CLIENT_MEM_FRACTION": ".5"}, "import jax\nR['bytes_limit'] = jax.devices()[0].memory_stats()['bytes_limit']"),
    ("XLA_CLIENT_MEM_FRACTION after import jax", {}, "import jax\nos.environ['XLA_CLIENT_MEM_FRACTION'] = '.25'\nR['bytes_limit'] = jax.devices()[0].memory_stats()['bytes_limit']"),
    ("XLA_CLIENT_MEM_FRACTION after jax.devices", {}, "import jax\njax.devices()\nos.environ['XLA_CLIENT_MEM_FRACTION'] = '.25'\nimport jax.numpy as jnp\njnp.ones(1).block_until_ready()\nR['bytes_limit'] = jax.devices()[0].memory_stats()['bytes_limit']"),
    ("config jax_platforms=cpu before backend", {}, "import jax\njax.config.update('jax_platforms', 'cpu')\nR['platform'] = jax.devices()[0].platform"),
    ("config jax_platforms=cpu after backend", {}, "import jax\njax.devices()\njax.config.update('jax_platforms', 'cpu')\nimport jax.numpy as jnp\nR['platform'] = list(jnp.ones(1).devices())[0].platform\nR['devices0'] = jax.devices()[0].platform"),
    # The older option (jax-ml/jax#10320): does it still exist, and does it move later arrays once the backend started?
    ("config jax_platform_name=cpu before backend", {}, "import jax\njax.config.update('jax_platform_name', 'cpu')\nimport jax.numpy as jnp\nR['platform'] = list(jnp.ones(1).devices())[0].platform\nR['devices0'] = jax.devices()[0].platform"),
    ("config jax_platform_name=cpu after backend", {}, "import jax\nimport jax.numpy as jnp\nx = jnp.ones(1).block_until_ready()\njax.config.update('jax_platform_name', 'cpu')\nR['platform'] = list(jnp.zeros(1).devices())[0].platform\nR['default_backend'] = jax.default_backend()\nR['devices0'] = jax.devices()[0].platform"),
    ("config jax_default_device=cpu after backend", {}, "import jax\nimport jax.numpy as jnp\nx = jnp.ones(1).block_until_ready()\njax.config.update('jax_default_device', jax.devices('cpu')[0])\nR['platform'] = list(jnp.zeros(1).devices())[0].platform"),
]
# freeze points in jax: call, then CUDA_VISIBLE_DEVICES='', then jax.devices()
JAX_FREEZE = [
    ("import jax", "pass"), ("jax.devices", "jax.devices()"), ("jax.local_devices", "jax.local_devices()"),
    ("jax.device_count", "jax.device_count()"), ("jax.local_device_count", "jax.local_device_count()"),
    ("jax.default_backend", "jax.default_backend()"), ("jax.process_count", "jax.process_count()"),
    ("jax.process_index", "jax.process_index()"), ("jax.numpy.ones", "jax.numpy.ones(1)"),
    ("jax.random.PRNGKey", "jax.random.PRNGKey(0)"), ("jax.config.update", "jax.config.update('jax_enable_x64', True)"),
    ("import flax", "import flax"), ("import optax", "import optax"),
]
KERAS_CASES = [
    ("KERAS_BACKEND=jax before import keras", {"KERAS_BACKEND": "jax"}, "import keras\nR['backend'] = keras.backend.backend()"),
    ("KERAS_BACKEND written after import keras", {"KERAS_BACKEND": "torch"}, "import keras\nos.environ['KERAS_BACKEND'] = 'jax'\nR['backend'] = keras.backend.backend()\nR['keras'] = keras.__version__"),
    ("keras.config.set_backend after import keras", {"KERAS_BACKEND": "torch"}, "import keras\nkeras.config.set_backend('jax')\nimport keras\nR['backend'] = keras.backend.backend()"),
]


def run_py(src, env_extra=None, pythonpath=None, timeout=180):
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")}
    env.update(env_extra or {})
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    t0 = time.time()
    try:
        p = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"rc": "timeout", "seconds": timeout}
    res = {"rc": p.returncode, "seconds": round(time.time() - t0, 1)}
    for line in p.stdout.splitlines():
        if line.startswith(MARK):
            res.update(json.loads(line[len(MARK):]))
    if p.returncode != 0 or MARK not in p.stdout:
        res["stderr_tail"] = p.stderr[-500:]
    warn = [ln.strip()[:240] for ln in p.stderr.splitlines() if "deprecat" in ln.lower() or "Warning" in ln]
    if warn:
        res["warnings"] = warn[:4]
    return res


def indent(body):
    return "\n".join("    " + ln for ln in body.splitlines())


def build_cases(groups, jax_path, uuid):
    cases = []
    if "torch" in groups:
        for cid, call in TORCH_CALLS:
            cases.append(("torch-freeze", cid, {}, FREEZE_TEMPLATE.replace("__CALL__", call), None))
        for cid, env, call in TORCH_ENV_CASES:
            cases.append(("torch-freeze", cid, env, FREEZE_TEMPLATE.replace("__CALL__", call), None))
        for mod in IMPORTS:
            if mod != "torch_geometric":
                cases.append(("import-freeze", f"import {mod}", {}, IMPORT_TEMPLATE.replace("__MOD__", mod), None))
    if "pyg" in groups:  # torch_geometric from the --jax-path folder (pip --target)
        cases.append(("import-freeze", "import torch_geometric", {}, IMPORT_TEMPLATE.replace("__MOD__", "torch_geometric"), jax_path))
    if "alloc" in groups:
        for var in ALLOC_VARS:
            for value in ALLOC_VALUES:
                for pid, call in ALLOC_POINTS:
                    src = (ALLOC_TEMPLATE.replace("__BEFORE__", "True" if call is None else "False").replace("__CALL__", call or "pass")
                           .replace("__VAR__", var).replace("__VALUE__", value))
                    cases.append(("alloc", f"{var}={value} {pid}", {}, src, None))
        cases.append(("alloc", "both: PYTORCH_ALLOC_CONF=expandable_segments:True, PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False", {"PYTORCH_ALLOC_CONF": "expandable_segments:True", "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:False"},
                      ALLOC_TEMPLATE.replace("__BEFORE__", "False").replace("__CALL__", "pass").replace('os.environ["__VAR__"] = "__VALUE__"', "pass"), None))
    if "cvd" in groups:
        for v in CVD_VALUES:
            v = v.replace("__UUID8__", uuid[4:12] if uuid else "x").replace("__UUID__", uuid or "GPU-x")
            src = "import json, torch\nR = {'device_count': torch.cuda.device_count()}\ntry:\n    torch.ones(1, device='cuda'); R['alloc'] = True\nexcept BaseException as e:\n    R['alloc'] = False\nprint('@@RESULT ' + json.dumps(R))"
            cases.append(("cvd", v, {"CUDA_VISIBLE_DEVICES": v}, src, None))
    if "jax" in groups and jax_path:
        for cid, env, body in JAX_CASES:
            cases.append(("jax", cid, env, JAX_TEMPLATE.replace("__BODY__", indent(body)), jax_path))
        for cid, call in JAX_FREEZE:
            body = f"import jax\n{call}\nos.environ['CUDA_VISIBLE_DEVICES'] = ''\nR['platform_after'] = jax.devices()[0].platform\nR['frozen'] = R['platform_after'] == 'gpu'"
            cases.append(("jax-freeze", cid, {}, JAX_TEMPLATE.replace("__BODY__", indent(body)), jax_path))
    if "keras" in groups and jax_path:
        for cid, env, body in KERAS_CASES:
            cases.append(("keras", cid, env, JAX_TEMPLATE.replace("__BODY__", indent(body)), jax_path))
    return cases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--jax-path", default=None, help="a pip --target folder holding jax/keras/torch_geometric")
    ap.add_argument("--only", default="torch,alloc,cvd,pyg,jax,keras")
    ap.add_argument("--jobs", type=int, default=8)
    a = ap.parse_args()
    groups = set(a.only.split(","))
    smi = subprocess.run(["nvidia-smi", "--query-gpu=index,name,driver_version,uuid", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip().splitlines()
    uuid = smi[0].split(", ")[3] if smi else None
    cases = build_cases(groups, a.jax_path, uuid)
    out = []
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        futs = [(c, ex.submit(run_py, c[3], c[2], c[4])) for c in cases]
        for (group, cid, env, _src, _pp), fut in futs:
            r = fut.result()
            row = {"group": group, "case": cid, "env": env, **r}
            out.append(row)
            print(json.dumps(row)[:400], flush=True)
    env = {"python": sys.version.split()[0], "nvidia_smi": [", ".join(s.split(", ")[:3]) for s in smi],
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    for mod in ("torch",):
        try:
            m = __import__(mod)
            env[mod] = m.__version__
            env["cuda"] = m.version.cuda
        except Exception as e:  # noqa: BLE001
            env[mod] = f"unavailable: {e}"
    for r in out:
        if r["group"] == "jax" and r["case"] == "version":
            env["jax"] = r.get("jax")
        if r["group"] == "keras" and r.get("keras"):
            env["keras"] = r["keras"]
        if r["group"] == "import-freeze" and r.get("version"):
            env[r["case"].split()[1]] = r["version"]
    json.dump({"environment": env, "cases": out}, open(a.out, "w"), indent=1)
    print(f"{len(out)} cases written to {a.out}")


if __name__ == "__main__":
    main()
