#!/usr/bin/env bash
# The main job, from a fresh clone on Debian 12: set up (scripts/setup.sh),
# fetch the full MNIST (scripts/fetch_mnist.sh), build the `nodeflow` command,
# train examples/lenet5.json on the 60,000 training digits, save it, reload the
# saved file and evaluate it on the 10,000 test digits, and check
#  - that the reloaded model predicts exactly what the trained model in memory
#    predicted, bit for bit (inside `nodeflow train`, and again across
#    processes: the predictions `train` wrote and those `eval` wrote are compared
#    byte by byte),
#  - that the test accuracy is at least 99.0%, and
#  - that the trainer's log gives every epoch's training speed (samples/s) and time.
# Results go to runs/lenet5/ (override with NODEFLOW_RUN_DIR): the trained
# graph, metrics CSV, chart, checkpoint, predictions and logs.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${NODEFLOW_BUILD_DIR:-$root/build}
run=${NODEFLOW_RUN_DIR:-$root/runs/lenet5}
required_accuracy=99.00

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
  echo "main job: FAILED: test accuracy ${accuracy:-unknown}% is below ${required_accuracy}%" >&2
  exit 1
fi
epochs=$(($(wc -l < "$run/lenet5.trained.metrics.csv") - 1))
# "epoch 10/10 done: ... | 5012 samples/s | 11.9s | 0s left": the last epoch's speed and time.
speed=$(sed -n 's/.*epoch \([0-9]*\)\/\([0-9]*\) done: .* | \([0-9]*\) samples\/s | \([0-9.]*s\) | .*/\3 samples\/s, \4/p' \
          "$run/train.log" | tail -n 1)
logged=$(grep -c 'done: .* samples/s | [0-9.]*s |' "$run/train.log" || true)
if [[ $logged -ne $epochs || -z $speed ]]; then
  echo "main job: FAILED: the training log ($run/train.log) does not give the speed and time of" \
       "each of the ${epochs} epochs" >&2
  exit 1
fi
echo "main job: OK: test accuracy ${accuracy}% on the 10,000 MNIST test digits after ${epochs} epochs" \
     "on the 60,000 training digits (last epoch: ${speed}); reloaded predictions identical bit for" \
     "bit (across processes too); ${seconds} s for training and evaluation; files in ${run}"
