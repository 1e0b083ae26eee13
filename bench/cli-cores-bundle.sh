#!/bin/bash
# Packs what bench/cli-cores.py needs on a machine with more cores (the GPU machine of the device
# tool, 16 cores, no network): the Node.js that runs the CLI here, dist/cli.js with its parser
# files, native Ruff 0.16.9 (.bench-tools/ruff, see BENCHMARKS.md) and python3-torch's source
# (TORCH_TREE, default /tmp/torchcorpus). Writes .devbench/bundle.tar.xz (git-ignored, about 46 MB).
# There: `mkdir -p /tmp/b && tar -xJf .devbench/bundle.tar.xz -C /tmp/b && python3 bench/cli-cores.py /tmp/b OUT.json`.
set -euo pipefail
cd "$(dirname "$0")/.."
tree=${TORCH_TREE:-/tmp/torchcorpus}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/cli" .devbench
cp dist/cli.js dist/*.wasm "$work/cli/"
cp "$(command -v node)" "$work/node"
cp .bench-tools/ruff/ruff-0.16.9.data/scripts/ruff "$work/ruff"
cp -r "$tree" "$work/torchcorpus"
tar -cJf .devbench/bundle.tar.xz -C "$work" .
ls -la .devbench/bundle.tar.xz
