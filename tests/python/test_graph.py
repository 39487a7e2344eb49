"""Loading and saving, and what a graph says about its tensors."""
import numpy as np

import nodeflow
from conftest import LENET, same_bits


def test_inputs_outputs_initializers(lenet):
    assert [(t.name, t.dtype, t.shape) for t in lenet.inputs] == [
        ("image", "float32", (None, 1, 28, 28)), ("label", "int64", (None,))]
    assert [(t.name, t.dtype, t.shape) for t in lenet.outputs] == [
        ("logits", "float32", (None, 10)), ("loss", "float32", ())]
    inits = {t.name: t for t in lenet.initializers}
    assert inits["conv1.W"].shape == (6, 1, 5, 5) and inits["conv1.W"].trainable
    assert lenet.parameter_count == 61706
    assert repr(lenet) == (
        "<nodeflow.Graph 'lenet5': 2 inputs, 2 outputs, 10 initializers, 13 nodes>")
    assert repr(lenet.inputs[0]) == (
        "TensorInfo(name='image', dtype='float32', shape=(None, 1, 28, 28))")


def test_check_gives_every_tensor(lenet):
    tensors = lenet.check()
    assert tensors == lenet.tensors
    assert {"image", "conv1.W", "logits", "loss"} <= set(tensors)
    assert tensors["conv1.W"].shape == (6, 1, 5, 5)
    assert tensors["logits"].shape == (None, 10)


def test_loads_json_and_onnx_and_round_trip(lenet, tmp_path):
    text = lenet.dumps()
    assert nodeflow.loads(text).dumps() == text
    assert nodeflow.loads(text.encode()).dumps() == text
    model = lenet.dumps("onnx")
    assert isinstance(model, bytes)
    from_onnx = nodeflow.loads(model, format="onnx")
    lenet.save(tmp_path / "g.onnx")
    assert nodeflow.load(tmp_path / "g.onnx").dumps() == from_onnx.dumps()
    for init in lenet.initializers:
        assert same_bits(from_onnx.initializer(init.name), lenet.initializer(init.name))


def test_initializers_read_and_written_as_arrays(tmp_path):
    g = nodeflow.load(LENET)
    w = g.initializer("fc3.W")
    assert w.shape == (10, 84) and w.dtype == np.float32 and not w.flags.writeable
    new = np.arange(840, dtype=np.float32).reshape(10, 84)
    g.set_initializer("fc3.W", new)
    assert same_bits(g.initializer("fc3.W"), new)
    assert same_bits(w, nodeflow.load(LENET).initializer("fc3.W"))  # the old view is unchanged
    new[0, 0] = -1  # the graph holds a copy
    assert g.initializer("fc3.W")[0, 0] == 0
    g.save(tmp_path / "g.json")
    saved = nodeflow.load(tmp_path / "g.json")
    assert same_bits(saved.initializer("fc3.W"), g.initializer("fc3.W"))
