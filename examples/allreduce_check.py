"""All-reduce check: proves a torchrun run really uses the GPUs selected in GPU Pilot.

Run it from GPU Pilot on a machine with at least two NVIDIA GPUs: tick two GPUs (say 0 and 1) in
the GPU view, set "gpuPilot.run.launcher": "torchrun" (or use "GPU Pilot: Run Active File With..."
and pick torchrun), then run this file. GPU Pilot starts

    torchrun --standalone --nproc_per_node=2 examples/allreduce_check.py

with CUDA_VISIBLE_DEVICES=0,1 and CUDA_DEVICE_ORDER=PCI_BUS_ID. By hand, the same is:

    CUDA_VISIBLE_DEVICES=0,1 CUDA_DEVICE_ORDER=PCI_BUS_ID torchrun --standalone --nproc_per_node=2 examples/allreduce_check.py

Each rank takes the GPU of its LOCAL_RANK, joins an NCCL process group, all-reduces a tensor
holding rank + 1, and checks the sum (1 + 2 + ... + world_size). Each rank prints one JSON line
with its rank, the physical GPU it ran on (UUID and PCI bus id, to compare with `nvidia-smi -L` and
the GPU view) and the result; rank 0 then checks that every rank ran on a different GPU and that
those GPUs are exactly the ones named by CUDA_VISIBLE_DEVICES. Set GPU_PILOT_ALLREDUCE_OUT to a file
to also get rank 0's summary there as JSON. Exit code 0 means all checks passed.

Needs: torch with CUDA and NCCL (Linux), two or more GPUs.
"""
import json
import os
import subprocess
import sys

import torch
import torch.distributed as dist


def physical_gpu(ordinal):
    """UUID and PCI bus id of CUDA device `ordinal` (as numbered inside this process)."""
    props = torch.cuda.get_device_properties(ordinal)
    uuid = str(getattr(props, "uuid", "") or "")
    if uuid and not uuid.startswith("GPU-"):
        uuid = "GPU-" + uuid
    bus = "%04x:%02x:%02x.0" % (
        getattr(props, "pci_domain_id", 0),
        getattr(props, "pci_bus_id", 0),
        getattr(props, "pci_device_id", 0),
    )
    return {"name": props.name, "uuid": uuid, "pci_bus_id": bus}


def nvidia_smi_indices():
    """nvidia-smi's index of each GPU UUID (nvidia-smi ignores CUDA_VISIBLE_DEVICES); {} without nvidia-smi."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=index,uuid", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    pairs = (line.split(",", 1) for line in out.splitlines() if "," in line)
    return {uuid.strip(): int(index) for index, uuid in pairs}


def main():
    if "LOCAL_RANK" not in os.environ:
        sys.exit("LOCAL_RANK is not set: start this file with torchrun (GPU Pilot: launcher torchrun) or accelerate with 2+ processes, not plain python.")
    local_rank = int(os.environ["LOCAL_RANK"])
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    count = torch.cuda.device_count()
    if local_rank >= count:
        sys.exit("LOCAL_RANK %d but only %d visible GPU(s) (CUDA_VISIBLE_DEVICES=%r): more processes than GPUs." % (local_rank, count, visible))

    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)  # before init_process_group: NCCL must not guess the device
    dist.init_process_group("nccl", device_id=device)
    rank = dist.get_rank()
    world = dist.get_world_size()

    x = torch.full((1024,), float(rank + 1), device=device)
    dist.all_reduce(x, op=dist.ReduceOp.SUM)
    torch.cuda.synchronize(device)
    expected = world * (world + 1) / 2
    ok = bool(torch.all(x == expected).item())

    me = {
        "rank": rank,
        "local_rank": local_rank,
        "world_size": world,
        "cuda_visible_devices": visible,
        "cuda_device_order": os.environ.get("CUDA_DEVICE_ORDER"),
        "device_count": count,
        "gpu": physical_gpu(local_rank),
        "allreduce_sum": x[0].item(),
        "expected": expected,
        "ok": ok,
    }
    print(json.dumps(me), flush=True)

    everyone = [None] * world
    dist.all_gather_object(everyone, me)
    failures = []
    if rank == 0:
        uuids = [r["gpu"]["uuid"] for r in everyone]
        if len(set(uuids)) != world:
            failures.append("ranks share a GPU: %s" % uuids)
        if not all(r["ok"] for r in everyone):
            failures.append("all_reduce gave a wrong sum on ranks %s" % [r["rank"] for r in everyone if not r["ok"]])
        entries = [e.strip() for e in visible.split(",") if e.strip()]
        smi = nvidia_smi_indices()
        indices = [smi.get(u) for u in uuids]
        for r, index in zip(everyone, indices):
            r["gpu"]["nvidia_smi_index"] = index
        if entries and all(e.isdigit() for e in entries) and smi:
            # Indices selected: with CUDA_DEVICE_ORDER=PCI_BUS_ID, rank i's GPU is nvidia-smi's GPU entries[i].
            if os.environ.get("CUDA_DEVICE_ORDER") != "PCI_BUS_ID":
                failures.append("CUDA_DEVICE_ORDER is not PCI_BUS_ID: CUDA may number the GPUs unlike nvidia-smi")
            want = [int(e) for e in entries[:world]]
            if indices != want:
                failures.append("ranks ran on nvidia-smi GPUs %s, CUDA_VISIBLE_DEVICES=%s asked for %s" % (indices, visible, want))
        elif entries and all(e.startswith("GPU-") for e in entries):
            # UUIDs selected: every rank's GPU must be one of them (a prefix is enough for CUDA).
            stray = [u for u in uuids if not any(u.startswith(e) for e in entries)]
            if stray:
                failures.append("GPUs outside CUDA_VISIBLE_DEVICES=%s: %s" % (visible, stray))
        elif entries and len(entries) < world:
            failures.append("world size %d is larger than CUDA_VISIBLE_DEVICES=%s" % (world, visible))
        summary = {"ok": not failures, "failures": failures, "world_size": world, "cuda_visible_devices": visible, "ranks": everyone}
        print(json.dumps({"summary": summary}), flush=True)
        out = os.environ.get("GPU_PILOT_ALLREDUCE_OUT")
        if out:
            with open(out, "w") as f:
                json.dump(summary, f, indent=2)
    status = torch.tensor([len(failures)], device=device)
    dist.broadcast(status, src=0)
    dist.barrier(device_ids=[local_rank])
    dist.destroy_process_group()
    if status.item() != 0:
        sys.exit(1)


if __name__ == "__main__":
    main()
