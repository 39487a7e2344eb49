#!/usr/bin/env bash
# Times `nodeflow run` writing a set of N outputs (default 1,250 5,000 20,000),
# each a 136-byte .npy file, twice per size: into a new OUTDIR, then over the
# set it holds. Prints seconds and microseconds per file; the time per file
# should not grow with N. NODEFLOW names the binary (default build/nodeflow);
# OUTPUT_SETS_DIR the directory to work in (default: a new one under $TMPDIR;
# its file system is the one measured). Run it on a quiet machine: the figures
# are dominated by the disk's flushes.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
nodeflow=${NODEFLOW:-$root/build/nodeflow}
sizes=("$@")
[[ ${#sizes[@]} -eq 0 ]] && sizes=(1250 5000 20000)
work=$(mktemp -d "${OUTPUT_SETS_DIR:-${TMPDIR:-/tmp}}/nodeflow-output-sets.XXXXXX")
trap 'rm -rf "$work"' EXIT

printf '%8s %8s %10s %12s\n' outputs write seconds us/file
for n in "${sizes[@]}"; do
  python3 - "$work/g$n.json" "$work/x.npy" "$n" <<'EOF'
import json, struct, sys
graph, npy, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(graph, "w") as f:
    json.dump({"format": "nodeflow.graph", "version": 1, "name": "fanout",
               "inputs": [{"name": "x", "dtype": "float32", "shape": [1, 2]}],
               "outputs": ["y%d" % i for i in range(n)],
               "nodes": [{"op_type": "Relu", "name": "r%d" % i, "inputs": ["x"],
                          "specified_outputs_name": ["y%d" % i]} for i in range(n)]}, f)
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }"
header += " " * (127 - 10 - len(header)) + "\n"
with open(npy, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<2f", 1.0, -2.0))
EOF
  for write in new replace; do
    start=$(date +%s.%N)
    "$nodeflow" run "$work/g$n.json" -i "x=$work/x.npy" -o "$work/out$n"
    end=$(date +%s.%N)
    python3 -c "import sys; n, s, e = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]); \
print('%8d %8s %10.2f %12.0f' % (n, sys.argv[4], e - s, 1e6 * (e - s) / n))" "$n" "$start" "$end" "$write"
  done
done
