#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) in build-fuzz/ and runs
# each for SECONDS (default 60): fuzz/run.sh [SECONDS]. The corpus is seeded from
# the conformance documents and .npy files, the examples, the small real ONNX
# models of tests/onnx-models/ and every past crash or seed kept in
# tests/regression/ (tests/regression/onnx/ holds models exported from the
# conformance corpus). Exits non-zero if a target crashes, leaks, trips a
# sanitizer or breaks a property; the input is then in build-fuzz/artifacts/
# and belongs in tests/regression/<target>/ (the unit tests replay it).
# Needs clang and libFuzzer: scripts/setup.sh --fuzz installs Debian's clang 14
# with its libFuzzer (libfuzzer-14-dev, libclang-rt-14-dev); NODEFLOW_FUZZ_CXX
# names another clang++.
set -euo pipefail
seconds=${1:-60}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${NODEFLOW_FUZZ_BUILD_DIR:-$root/build-fuzz}
cd "$root"

cxx=${NODEFLOW_FUZZ_CXX:-clang++-14}
CC=${cxx/clang++/clang} CXX=$cxx cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DNODEFLOW_BUILD_FUZZERS=ON -DNODEFLOW_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzz_graph_json fuzz_onnx fuzz_npy

corpus=$build/corpus
artifacts=$build/artifacts
mkdir -p "$corpus/graph_json" "$corpus/onnx" "$corpus/npy" "$artifacts"
for f in tests/conformance/*/graph.json tests/conformance-ops/*/graph.json examples/*.json; do
  [[ -f $f ]] && cp "$f" "$corpus/graph_json/seed_$(echo "$f" | tr '/' '_')"
done
while IFS= read -r -d '' f; do
  cp "$f" "$corpus/npy/seed_$(echo "$f" | tr '/' '_')"
done < <(find tests/conformance tests/conformance-ops examples -name '*.npy' -print0)
# The real models under 64 KiB (the two dilated MaxPools are megabytes).
while IFS= read -r -d '' f; do
  cp "$f" "$corpus/onnx/seed_$(echo "$f" | tr '/' '_')"
done < <(find tests/onnx-models -name '*.onnx' -size -64k -print0)
for target in graph_json onnx npy; do
  if [[ -d tests/regression/$target ]]; then
    cp tests/regression/"$target"/* "$corpus/$target/" 2>/dev/null || true
  fi
done

export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
status=0
for target in graph_json onnx npy; do
  echo "=== fuzz_$target for ${seconds}s"
  if ! "$build/fuzz/fuzz_$target" "$corpus/$target" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=4096 -dict="fuzz/$target.dict" -artifact_prefix="$artifacts/$target-" \
      -print_final_stats=1 2>"$build/fuzz_$target.log"; then
    status=1
    tail -n 60 "$build/fuzz_$target.log"
    echo "fuzz_$target failed: reproducer(s) in $artifacts (add them to tests/regression/$target/)" >&2
  else
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)' "$build/fuzz_$target.log" || true
  fi
done
exit "$status"
