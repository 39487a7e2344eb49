"""Shared pieces of the Python module's tests (docs/python.md).

ctest runs each file with PYTHONPATH naming the built module and NODEFLOW_CLI
the `nodeflow` binary of the same build; the repository's examples/ are found
from this file's place."""
import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import nodeflow

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
LENET = EXAMPLES / "lenet5.json"


def cli():
    path = os.environ.get("NODEFLOW_CLI")
    if not path:
        pytest.skip("NODEFLOW_CLI names no nodeflow binary (ctest sets it)")
    return path


def run_cli(*args, cwd=None):
    """Runs `nodeflow ARGS`, fails the test with its stderr unless it exits 0."""
    r = subprocess.run([cli(), *map(str, args)], cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 0, f"nodeflow {' '.join(map(str, args))}: {r.stderr}"
    return r.stdout


def same_bits(a, b):
    """Equal dtype, shape and bytes."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def graph_document(inputs, outputs, nodes, initializers=()):
    """A graph document (docs/graph-format.md) as JSON text."""
    return json.dumps({"format": "nodeflow.graph", "version": 1, "name": "test",
                       "inputs": list(inputs), "outputs": list(outputs),
                       "initializers": list(initializers), "nodes": list(nodes)})


def reshape_graph(dtype="float32"):
    """x [?, 4] -> Reshape(x, [-1]) = y: y is x's buffer, so an output that
    shares memory with the input shows the input was not copied."""
    return nodeflow.loads(graph_document(
        [{"name": "x", "dtype": dtype, "shape": [None, 4]}], ["y"],
        [{"op_type": "Reshape", "name": "flat", "inputs": ["x", "s"],
          "specified_outputs_name": ["y"]}],
        [{"name": "s", "dtype": "int64", "shape": [1], "data": [-1]}]))


@pytest.fixture(scope="session")
def lenet():
    return nodeflow.load(LENET)


@pytest.fixture
def digits():
    """Two seeded 28x28 images and their labels, as LeNet-5 takes them."""
    rng = np.random.default_rng(5)
    return rng.random((2, 1, 28, 28), dtype=np.float32), np.array([3, 7], dtype=np.int64)
