#!/usr/bin/env bash
# The main job: set up, build the `nodeflow` command, then check, run and
# differentiate the example graph examples/pool_example.json on a generated image.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${NODEFLOW_BUILD_DIR:-$root/build}
work=$build/example
# numpy from Debian's python3-numpy (installed by setup.sh), whatever python3 is first on PATH.
python=/usr/bin/python3

"$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target nodeflow_cli
nodeflow=$build/nodeflow

mkdir -p "$work"
"$python" "$root/examples/make_input.py" "$work/image.npy" "$work/dpooled.npy"

echo "== nodeflow check"
"$nodeflow" check "$root/examples/pool_example.json"

echo "== nodeflow run"
rm -rf "$work/run"
"$nodeflow" run "$root/examples/pool_example.json" -i image="$work/image.npy" -o "$work/run"
"$python" "$root/examples/show_npy.py" "$work/run"/*.npy

echo "== nodeflow backward (seed: d pooled = 1)"
rm -rf "$work/backward"
"$nodeflow" backward "$root/examples/pool_example.json" -i image="$work/image.npy" \
  -g pooled="$work/dpooled.npy" -o "$work/backward"
"$python" "$root/examples/show_npy.py" "$work/backward/image.grad.npy"
