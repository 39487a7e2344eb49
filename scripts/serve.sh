#!/usr/bin/env bash
# The graph editor in one command, from a fresh clone on Debian 12: set up
# (scripts/setup.sh), fetch the full MNIST (scripts/fetch_mnist.sh) for
# training runs, build the `nodeflow` command (build/, Release) and the editor
# (editor/dist: npm ci, vite), then `nodeflow serve` with the graphs of
# examples/ (or of --root DIR given here). It prints the URL to open
# (http://127.0.0.1:8080/?token=...); Ctrl-C stops it. Arguments are passed to
# `nodeflow serve` (docs/server.md), e.g. scripts/serve.sh --port 8090.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build
"$root/scripts/setup.sh"
"$root/scripts/fetch_mnist.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target nodeflow_cli
(cd "$root/editor" && npm ci --no-audit --no-fund --silent && npm run build --silent)
args=("$@")
[[ " $* " == *" --root "* ]] || args=(--root "$root/examples" "${args[@]}")
exec "$build/nodeflow" serve --editor "$root/editor/dist" --data "mnist:$root/.cache/mnist" \
  --data fashion-mnist "${args[@]}"
