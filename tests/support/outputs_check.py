#!/usr/bin/env python3
"""Reports what a reader finds in a `nodeflow run`/`backward` OUTDIR.

An implementation of the reader's side of README "The command line" (output
sets) independent of the C++ writer: it parses the manifest with Python's json
and hashes with hashlib. Prints one fact per line, for the tests to compare:

  manifest present|absent
  matches yes|no          the manifest's files exist with its sizes and SHA-256
  listed NAME             per file the manifest lists
  file NAME SHA256        per *.npy file in OUTDIR
  stale NAME              per staging directory or commit record left behind
"""
import hashlib
import json
import os
import sys

MANIFEST = ".nodeflow-outputs.json"


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main(outdir):
    names = sorted(os.listdir(outdir))
    path = os.path.join(outdir, MANIFEST)
    if os.path.exists(path):
        print("manifest present")
        with open(path, "rb") as f:
            manifest = json.load(f)
        ok = manifest.get("format") == "nodeflow.outputs" and manifest.get("version") == 1
        for entry in manifest["files"]:
            print("listed", entry["name"])
            file = os.path.join(outdir, entry["name"])
            ok = ok and os.path.isfile(file) and os.path.getsize(file) == entry["bytes"] \
                and sha256(file) == entry["sha256"]
        print("matches", "yes" if ok else "no")
    else:
        print("manifest absent")
    for name in names:
        if name.endswith(".npy"):
            print("file", name, sha256(os.path.join(outdir, name)))
        elif name.startswith(".nodeflow-stage-") or name == ".nodeflow-commit" \
                or ".tmp-" in name:
            print("stale", name)


if __name__ == "__main__":
    main(sys.argv[1])
