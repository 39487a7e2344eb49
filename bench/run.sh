#!/usr/bin/env bash
# Builds bench/graph_bench (Release, in build-bench/), runs it and prints nodes
# per second for 500, 5,000 and 50,000 nodes with the ratio between sizes;
# exits 1 if load or forward slows down per node by more than MAX_RATIO
# (default 1.5) from one size to another. Extra arguments go to the benchmark
# (e.g. --benchmark_filter=BM_Load). Run it on a quiet machine: other
# processes competing for the cores and caches distort the figures.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${NODEFLOW_BENCH_BUILD_DIR:-$root/build-bench}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DNODEFLOW_BUILD_BENCH=ON \
  -DNODEFLOW_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target graph_bench
"$build/bench/graph_bench" --benchmark_repetitions="${REPETITIONS:-3}" \
  --benchmark_min_time="${MIN_TIME:-0.5}" --benchmark_out="$build/graph_bench.json" \
  --benchmark_out_format=json "$@" >/dev/null
python3 "$root/bench/linearity.py" "$build/graph_bench.json" --max-ratio "${MAX_RATIO:-1.5}"
