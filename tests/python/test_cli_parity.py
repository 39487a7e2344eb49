"""The module gives what the command line gives, bit for bit: run, backward,
the op schemas, and the graph file it saves."""
import json

import numpy as np

import nodeflow
from conftest import LENET, run_cli, same_bits


def test_run_equals_cli_run(lenet, digits, tmp_path):
    image, label = digits
    np.save(tmp_path / "image.npy", image)
    np.save(tmp_path / "label.npy", label)
    run_cli("run", LENET, "-i", f"image={tmp_path / 'image.npy'}",
            "-i", f"label={tmp_path / 'label.npy'}", "-o", tmp_path / "out")
    outputs = lenet.run(image=image, label=label)
    assert sorted(outputs) == ["logits", "loss"]
    for name, value in outputs.items():
        assert same_bits(value, np.load(tmp_path / "out" / f"{name}.npy")), name


def test_backward_equals_cli_backward(lenet, digits, tmp_path):
    image, label = digits
    seed = np.float32(1.0).reshape(())
    np.save(tmp_path / "image.npy", image)
    np.save(tmp_path / "label.npy", label)
    np.save(tmp_path / "dloss.npy", seed)
    run_cli("backward", LENET, "-i", f"image={tmp_path / 'image.npy'}",
            "-i", f"label={tmp_path / 'label.npy'}", "-g", f"loss={tmp_path / 'dloss.npy'}",
            "-o", tmp_path / "out", "--seed", 3)
    run = lenet.forward({"image": image, "label": label}, seed=3)
    for name, value in run.outputs.items():
        assert same_bits(value, np.load(tmp_path / "out" / f"{name}.npy")), name
    grads = lenet.backward(run, loss=seed)
    assert run.consumed
    trainable = {i.name for i in lenet.initializers if i.trainable}
    assert set(grads) == trainable | {"image"}
    for name, value in grads.items():
        assert same_bits(value, np.load(tmp_path / "out" / f"{name}.grad.npy")), name


def test_ops_is_the_cli_document():
    assert nodeflow.ops() == json.loads(run_cli("ops", "--json"))


def test_saved_files_equal_cli_convert(lenet, tmp_path):
    for name in ("g.json", "g.onnx"):
        lenet.save(tmp_path / ("py-" + name))
        run_cli("convert", LENET, tmp_path / ("cli-" + name))
        assert (tmp_path / ("py-" + name)).read_bytes() == (tmp_path / ("cli-" + name)).read_bytes()
    assert lenet.dumps() == (tmp_path / "py-g.json").read_text()
    assert lenet.dumps("onnx") == (tmp_path / "py-g.onnx").read_bytes()
