#!/bin/sh
# Usage: check_exports.sh NM LIBRARY HEADER
# Fails unless the dynamic symbols LIBRARY defines are exactly the NF_API
# functions HEADER declares (and the version node of capi/nodeflow.map).
set -eu
nm=$1 library=$2 header=$3
exported=$("$nm" -D --defined-only "$library" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort)
declared=$(sed -n 's/^NF_API [^(]*[ *]\(nf_[a-z_0-9]*\)(.*/\1/p' "$header" | sort)
if [ "$exported" != "$declared" ]; then
  echo "exported symbols of $library differ from the NF_API functions of $header:"
  printf '%s\n' "$exported" > "${TMPDIR:-/tmp}/nodeflow-exported.$$"
  printf '%s\n' "$declared" | diff - "${TMPDIR:-/tmp}/nodeflow-exported.$$" || true
  rm -f "${TMPDIR:-/tmp}/nodeflow-exported.$$"
  exit 1
fi
echo "$(printf '%s\n' "$exported" | wc -l) symbols, all nf_* functions of $(basename "$header")"
