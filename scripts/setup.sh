#!/usr/bin/env bash
# Installs the Debian packages nodeflow needs to build and test. Idempotent and
# silent when everything is already installed; uses sudo only when not root.
set -euo pipefail

packages=(cmake g++ ccache libeigen3-dev nlohmann-json3-dev libspdlog-dev libgtest-dev
          libbenchmark-dev libcli11-dev python3-numpy)

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg -s "$pkg" 2>/dev/null | grep -q '^Status: install ok installed$'; then
    missing+=("$pkg")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

sudo=()
if [[ $(id -u) -ne 0 ]]; then
  sudo=(sudo)
fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
