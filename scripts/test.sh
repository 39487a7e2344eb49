#!/usr/bin/env bash
# Builds nodeflow (Release, in build/) and runs the whole test suite: unit
# tests, the conformance corpus through the library and the installed CLI,
# and the find_package(nodeflow) consumer; all but the MPI tests, which
# .ci/run runs after it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${NODEFLOW_BUILD_DIR:-$root/build}
jobs=$(nproc)

"$root/scripts/setup.sh"
# onnxruntime-node for tests/onnxruntime (the cross-check of exported models),
# pinned by its package-lock.json; ONNXRUNTIME_NODE_INSTALL=skip keeps its
# bundled CPU library and skips a download that fails offline.
if [[ ! -d "$root/tests/onnxruntime/node_modules/onnxruntime-node" ]]; then
  (cd "$root/tests/onnxruntime" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund)
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$jobs"
# The MPI tests (label "mpi", docs/distributed.md) run in CI's stage of their
# own: ctest --test-dir build -L mpi.
ctest --test-dir "$build" --output-on-failure -j"$jobs" -LE mpi
