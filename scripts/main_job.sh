#!/usr/bin/env bash
# The main job, from a fresh clone on Debian 12: set up (scripts/setup.sh),
# fetch the MNIST digits (scripts/fetch_mnist.sh), build the `nodeflow`
# command, train examples/lenet5.json on the 8,000 training digits, save it,
# reload the saved file and evaluate it on the 2,000 held-out digits, and check
#  - that the reloaded model predicts exactly what the trained model in memory
#    predicted, bit for bit (inside `nodeflow train`, and again across
#    processes: the predictions `train` wrote and those `eval` wrote are compared
#    byte by byte), and
#  - that the held-out accuracy is at least 97%.
# Results go to runs/lenet5/ (override with NODEFLOW_RUN_DIR): the trained
# graph, metrics CSV, chart, checkpoint, predictions and logs.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${NODEFLOW_BUILD_DIR:-$root/build}
run=${NODEFLOW_RUN_DIR:-$root/runs/lenet5}
required_accuracy=97.00

"$root/scripts/setup.sh"
"$root/scripts/fetch_mnist.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target nodeflow_cli
nodeflow=$build/nodeflow

mkdir -p "$run"
rm -f "$run"/*.npy
start=$(date +%s)
"$nodeflow" train examples/lenet5.json --config examples/lenet5.train.json --data mnist \
  -o "$run/lenet5.trained.json" --chart "$run/lenet5.chart.png" \
  --predictions "$run/train-predictions.npy" 2> >(tee "$run/train.log" >&2) | tee "$run/train.txt"
"$nodeflow" eval "$run/lenet5.trained.json" --data mnist --config examples/lenet5.train.json \
  --predictions "$run/eval-predictions.npy" | tee "$run/eval.txt"
seconds=$(( $(date +%s) - start ))

if ! cmp -s "$run/train-predictions.npy" "$run/eval-predictions.npy"; then
  echo "main job: FAILED: the reloaded model's predictions differ from the trained model's" >&2
  exit 1
fi
accuracy=$(sed -n 's/^accuracy \([0-9.]*\)% .*/\1/p' "$run/eval.txt" | head -n 1)
if [[ -z $accuracy ]] || ! awk -v a="$accuracy" -v r="$required_accuracy" 'BEGIN { exit !(a >= r) }'; then
  echo "main job: FAILED: held-out accuracy ${accuracy:-unknown}% is below ${required_accuracy}%" >&2
  exit 1
fi
epochs=$(($(wc -l < "$run/lenet5.trained.metrics.csv") - 1))
echo "main job: OK: held-out accuracy ${accuracy}% after ${epochs} epochs; reloaded predictions identical" \
     "bit for bit (across processes too); ${seconds} s for training and evaluation; files in ${run}"
