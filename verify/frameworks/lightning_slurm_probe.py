"""What a PyTorch Lightning Trainer does under Slurm when the step runs fewer tasks than its devices.

GPU022's Lightning sub-checks (session 71, recall case job-script-lightning-ntasks-one-below-per-node,
Lightning-AI/pytorch-lightning#20391): a job of `--ntasks=1 --ntasks-per-node=2 --gres=gpu:2` (or
`--ntasks=1` alone) started with `srun python train.py` runs ONE task, whose environment has
SLURM_NTASKS=1 (test/fixtures/slurm/ntasks-per-node/measured.md). Read in Lightning's source: the
Trainer then takes SLURMEnvironment (world size SLURM_NTASKS, starts no process of its own), its
`validate_settings` passes (SLURM_NTASKS_PER_NODE equals `devices`, or is not set), and DDP runs in
one process on the first of its devices, while `distributed_sampler_kwargs` (num_nodes x devices
replicas) would give that process only its shard of the data.

This probe fakes the Slurm variables of such a task (no Slurm needed) and records, for each
scenario, in a fresh interpreter: trainer.num_devices, trainer.world_size, the strategy and cluster
environment, torch.distributed's world size, the sampler Lightning put on the train loader, how many
samples each process trained on (of a 64-sample data set, batch 8, one epoch), the device each
process trained on, per-GPU peak memory, or the exception raised, and whether it finished within
the timeout (a hang shows as "timeout"). The CPU scenarios (accelerator="cpu", devices=2: the same
DDPStrategy and SLURMEnvironment code as for GPUs) run on any machine; the GPU scenarios, with the
default accelerator and devices ("auto": every visible GPU), run where at least two GPUs are visible
(one GPU: they are skipped and say so).

usage: python3 verify/frameworks/lightning_slurm_probe.py --out results.json [--timeout 120]
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

CHILD = r'''
import json, os, sys, time
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
try:
    import lightning as L
    from lightning.pytorch import Trainer
    version = L.__version__
except ImportError:
    import pytorch_lightning as L
    from pytorch_lightning import Trainer
    version = L.__version__

cfg = json.loads(sys.argv[1])
R = {"lightning": version, "torch": torch.__version__, "pid": os.getpid(),
     "SLURM_PROCID": os.environ.get("SLURM_PROCID"), "LOCAL_RANK": os.environ.get("LOCAL_RANK")}
seen = {"samples": 0, "batches": 0, "devices": set()}

class Tiny(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(16, 2)
    def training_step(self, batch, batch_idx):
        x, y = batch
        seen["samples"] += int(x.shape[0]); seen["batches"] += 1; seen["devices"].add(str(x.device))
        return nn.functional.cross_entropy(self.layer(x), y)
    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

def out():
    R["samples_trained"] = seen["samples"]; R["batches_trained"] = seen["batches"]
    R["train_devices"] = sorted(seen["devices"])
    if torch.cuda.is_available():
        R["gpu_peak_bytes"] = [torch.cuda.max_memory_allocated(i) for i in range(torch.cuda.device_count())]
    with open(os.path.join(os.environ["PROBE_RESULTS"], "%d.json" % os.getpid()), "w") as f:
        json.dump(R, f)

kw = dict(max_epochs=1, logger=False, enable_checkpointing=False, enable_progress_bar=False,
          enable_model_summary=False, num_sanity_val_steps=0)
kw.update(cfg.get("trainer", {}))
try:
    trainer = Trainer(**kw)
    s = trainer.strategy
    R["num_devices"] = trainer.num_devices
    R["trainer_world_size"] = trainer.world_size
    R["strategy"] = type(s).__name__
    R["cluster_environment"] = type(getattr(s, "cluster_environment", None)).__name__
    R["sampler_kwargs"] = getattr(s, "distributed_sampler_kwargs", None)
    R["root_device"] = str(s.root_device)
    g = torch.Generator().manual_seed(0)
    data = TensorDataset(torch.randn(64, 16, generator=g), torch.randint(0, 2, (64,), generator=g))
    loader = DataLoader(data, batch_size=8)
    trainer.fit(Tiny(), loader)
    R["dist_world_size"] = torch.distributed.get_world_size() if torch.distributed.is_initialized() else None
    R["dist_rank"] = torch.distributed.get_rank() if torch.distributed.is_initialized() else None
    R["num_training_batches"] = trainer.num_training_batches
    dl = trainer.train_dataloader
    R["train_sampler"] = type(dl.sampler).__name__ if dl is not None else None
    sp = getattr(dl, "sampler", None)
    R["train_sampler_replicas"] = getattr(sp, "num_replicas", None)
    R["ok"] = True
except BaseException as e:
    R["ok"] = False
    R["error"] = type(e).__name__ + ": " + str(e)[:400]
out()
'''

CLEAN = ("SLURM_", "TORCHELASTIC_", "PL_", "LT_")
CLEAN_EXACT = {"LOCAL_RANK", "RANK", "WORLD_SIZE", "GROUP_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK",
               "MASTER_ADDR", "MASTER_PORT", "CUDA_VISIBLE_DEVICES"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def slurm(ntasks, per_node, nodes=1, procid=0, nodeid=0, name="train"):
    env = {"SLURM_NTASKS": str(ntasks), "SLURM_NPROCS": str(ntasks), "SLURM_NNODES": str(nodes),
           "SLURM_JOB_NUM_NODES": str(nodes), "SLURM_JOB_NAME": name, "SLURM_JOB_ID": "4242",
           "SLURM_PROCID": str(procid), "SLURM_LOCALID": "0", "SLURM_NODEID": str(nodeid),
           "SLURM_NODELIST": "127.0.0.1", "SLURM_STEP_NUM_TASKS": str(ntasks)}
    if per_node is not None:
        env["SLURM_NTASKS_PER_NODE"] = str(per_node)
    return env


CPU2 = {"accelerator": "cpu", "devices": 2}
SCENARIOS = [
    # (name, what it stands for, trainer kwargs, one env per process started; [] = no Slurm at all)
    ("cpu-ntasks1-pernode2", "--ntasks=1 --ntasks-per-node=2, srun python; Trainer(devices=2)", CPU2,
     [slurm(1, 2)]),
    ("cpu-ntasks1-pernode2-ddp", "as above, strategy='ddp' named", dict(CPU2, strategy="ddp"), [slurm(1, 2)]),
    ("cpu-ntasks1-no-pernode", "--ntasks=1 (no --ntasks-per-node), srun python; Trainer(devices=2)", CPU2,
     [slurm(1, None)]),
    ("cpu-ntasks1-pernode1", "control: --ntasks-per-node=1, devices=2 (GPU022's existing check: ValueError)", CPU2,
     [slurm(1, 1)]),
    ("cpu-ntasks2-no-pernode", "--ntasks=2 without --ntasks-per-node (RuntimeError expected)", CPU2,
     [slurm(2, None)]),
    ("cpu-interactive", "control: job named interactive (Lightning starts its own processes)", CPU2,
     [slurm(1, 2, name="interactive")]),
    ("cpu-no-slurm", "control: no Slurm variables (Lightning starts its own processes)", CPU2, [{}]),
    ("cpu-2nodes-ntasks2-pernode2", "--nodes=2 --ntasks=2 --ntasks-per-node=2: one task on each of two nodes, "
     "both started here; Trainer(devices=2, num_nodes=2)", dict(CPU2, num_nodes=2),
     [slurm(2, 2, nodes=2, procid=0, nodeid=0), slurm(2, 2, nodes=2, procid=1, nodeid=1)]),
]
GPU_SCENARIOS = [
    ("gpu-auto-ntasks1-pernodeN", "--ntasks=1 --ntasks-per-node=N --gres=gpu:N, srun python; Trainer() defaults",
     {}, "pernode"),
    ("gpu-auto-ntasks1-no-pernode", "--ntasks=1 --gres=gpu:N, srun python; Trainer() defaults", {}, "none"),
    ("gpu-auto-no-slurm", "control: no Slurm variables; Trainer() defaults", {}, "noslurm"),
]


def run(child, cfg, envs, timeout):
    port = str(free_port())
    results_dir = tempfile.mkdtemp(prefix="probe-results-")
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(CLEAN) and k not in CLEAN_EXACT}
    procs = []
    for e in envs:
        env = dict(base, **e)
        env["PROBE_RESULTS"] = results_dir
        if e:
            env["MASTER_ADDR"] = "127.0.0.1"
            env["MASTER_PORT"] = port
        procs.append(subprocess.Popen([sys.executable, child, json.dumps(cfg)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    t0 = time.time()
    results = []
    for i, p in enumerate(procs):
        try:
            text, _ = p.communicate(timeout=max(1, timeout - (time.time() - t0)))
            rc = p.returncode
        except subprocess.TimeoutExpired:
            p.kill()
            text, _ = p.communicate()
            rc = "timeout"
        results.append({"rc": rc, "tail": text[-1500:] if rc != 0 else ""})
    # Each Python process Lightning ran (those started here and any it started itself) wrote one file.
    found = []
    for name in sorted(os.listdir(results_dir)):
        with open(os.path.join(results_dir, name)) as f:
            found.append(json.load(f))
    found.sort(key=lambda r: (str(r.get("SLURM_PROCID")), str(r.get("LOCAL_RANK"))))
    return {"seconds": round(time.time() - t0, 1), "processes": results, "results": found}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout", type=int, default=120)
    args = ap.parse_args()
    try:
        import torch
        ngpu = torch.cuda.device_count()
    except Exception:
        ngpu = 0
    out = {"python": sys.version.split()[0], "visible_gpus": ngpu, "scenarios": []}
    with tempfile.TemporaryDirectory() as d:
        child = os.path.join(d, "lightning_child.py")
        with open(child, "w") as f:
            f.write(CHILD)
        todo = [(n, w, {"trainer": kw}, envs) for n, w, kw, envs in SCENARIOS]
        for n, w, kw, kind in GPU_SCENARIOS:
            if ngpu < 2:
                out["scenarios"].append({"name": n, "what": w, "skipped": f"{ngpu} GPU visible, 2 needed"})
                continue
            envs = [{}] if kind == "noslurm" else [slurm(1, ngpu if kind == "pernode" else None)]
            todo.append((n, w.replace("N", str(ngpu)), {"trainer": kw}, envs))
        for n, w, cfg, envs in todo:
            r = run(child, cfg, envs, args.timeout)
            r.update({"name": n, "what": w, "trainer": cfg["trainer"]})
            out["scenarios"].append(r)
            first = (r["results"] or [{}])[0]
            print(f"{n}: {r['seconds']}s rc={[p['rc'] for p in r['processes']]} "
                  f"ok={first.get('ok')} devices={first.get('num_devices')} world={first.get('trainer_world_size')} "
                  f"env={first.get('cluster_environment')} sampler_kwargs={first.get('sampler_kwargs')} "
                  f"samples={[x.get('samples_trained') for x in r['results']]} "
                  f"train_devices={first.get('train_devices')} gpu_peak={first.get('gpu_peak_bytes')} "
                  f"error={first.get('error')}", flush=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
