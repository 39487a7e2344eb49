#!/bin/sh
# Usage: pkg_config_example.sh PREFIX SOURCE.c GRAPH WORK_DIR [EXTRA_LINK_FLAGS]
# Builds SOURCE.c as the README says, with pkg-config against the nodeflow
# installed in PREFIX, runs it on GRAPH and expects 10 logits.
set -eu
prefix=$1 source=$2 graph=$3 work=$4 extra=${5:-}
mkdir -p "$work"
pc=$(find "$prefix" -name nodeflow.pc | head -n 1)
[ -n "$pc" ] || { echo "no nodeflow.pc under $prefix"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
flags=$(pkg-config --cflags --libs nodeflow)
echo "cc -std=c99 -Wall -Wextra -Werror -pedantic $(basename "$source") $flags"
# shellcheck disable=SC2086
cc -std=c99 -Wall -Wextra -Werror -pedantic "$source" $flags $extra -o "$work/example"
libdir=$(pkg-config --variable=libdir nodeflow)
out=$(LD_LIBRARY_PATH="$libdir" "$work/example" "$graph")
echo "$out"
[ "$(echo "$out" | wc -w)" -eq 11 ]
