#!/usr/bin/env bash
# Builds nodeflow (Release, in build/) and runs the whole test suite: unit
# tests, the conformance corpus through the library and the installed CLI,
# and the find_package(nodeflow) consumer.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${NODEFLOW_BUILD_DIR:-$root/build}
jobs=$(nproc)

"$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$jobs"
ctest --test-dir "$build" --output-on-failure -j"$jobs"
