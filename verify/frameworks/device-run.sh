#!/bin/bash
# One device call for issue 21 (1 GPU is enough): torch freeze points, allocator, CUDA_VISIBLE_DEVICES
# values, then JAX/Keras/torch_geometric from a pip --target folder (the system site is left alone).
# usage (on the GPU machine): OUT=dir bash verify/frameworks/device-run.sh
set -u
OUT=${OUT:-/tmp/fw-out}; mkdir -p "$OUT"
PKGS=/tmp/fwpkgs
python3 -m pip list 2>/dev/null > "$OUT/pip-list.txt"
( timeout 300 python3 -m pip install --no-input --disable-pip-version-check --timeout 15 --retries 1 --target "$PKGS" \
    "jax[cuda13]" keras torch_geometric flax optax > "$OUT/pip.log" 2>&1; echo "pip rc $?" >> "$OUT/pip.log" ) &
PIP=$!
python3 verify/frameworks/probe.py --out "$OUT/torch.json" --only torch,alloc,cvd --jobs 12 > "$OUT/torch.log" 2>&1
echo "torch probe rc $?"
wait $PIP
tail -3 "$OUT/pip.log"
python3 verify/frameworks/probe.py --out "$OUT/jax.json" --only pyg,jax,keras --jax-path "$PKGS" --jobs 8 > "$OUT/jax.log" 2>&1
echo "jax probe rc $?"
tail -2 "$OUT/torch.log" "$OUT/jax.log"
