"""Arrays cross without a copy where docs/python.md promises it, and are copied
(or refused) where it says so."""
import numpy as np
import pytest

import nodeflow
from conftest import reshape_graph, same_bits


def test_contiguous_input_is_borrowed_and_output_is_not_copied():
    g = reshape_graph()
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    y = g.run(x=x)["y"]
    assert np.shares_memory(x, y)  # Reshape gives the input's buffer: the input was borrowed
    assert not y.flags.writeable  # it is the input's memory: read-only
    assert y.base is not None and type(y.base).__name__ == "PyCapsule"
    assert same_bits(y, x.ravel())


def test_computed_outputs_are_writeable_views_of_the_tensor(lenet, digits):
    out = lenet.run(image=digits[0], label=digits[1])
    logits = out["logits"]
    assert logits.flags.writeable and logits.flags.c_contiguous
    assert type(logits.base).__name__ == "PyCapsule"  # the tensor itself, no copy


def test_read_only_input_is_borrowed():
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    x.flags.writeable = False
    assert np.shares_memory(reshape_graph().run(x=x)["y"], x)


@pytest.mark.parametrize("make", [
    lambda a: a[:, ::2].repeat(2, axis=1),   # a fresh array, for reference
    lambda a: np.asfortranarray(a),          # not C-contiguous
    lambda a: a.astype(">f4"),               # big-endian
])
def test_other_layouts_are_copied(make):
    base = np.arange(8, dtype=np.float32).reshape(2, 4)
    x = make(base)
    y = reshape_graph().run(x=x)["y"]
    assert same_bits(y, np.ascontiguousarray(x, dtype=np.float32).ravel())
    if not (x.flags.c_contiguous and x.dtype.isnative):
        assert not np.shares_memory(x, y)


def test_strided_view_is_copied():
    big = np.arange(16, dtype=np.float32).reshape(2, 8)
    x = big[:, ::2]
    y = reshape_graph().run(x=x)["y"]
    assert not np.shares_memory(big, y)
    assert same_bits(y, x.ravel())


def test_misaligned_input_is_copied():
    raw = np.zeros(8 * 4 + 1, dtype=np.uint8)
    x = raw[1:].view(np.float32).reshape(2, 4)
    x[...] = np.arange(8).reshape(2, 4)
    assert not x.flags.aligned
    y = reshape_graph().run(x=x)["y"]
    assert not np.shares_memory(raw, y)
    assert same_bits(y, np.arange(8, dtype=np.float32))


def test_lists_are_converted_by_numpy_then_checked():
    g = reshape_graph("float64")
    assert same_bits(g.run(x=[[1.0, 2, 3, 4]])["y"], np.array([1.0, 2, 3, 4]))
    with pytest.raises(nodeflow.UnsupportedDType, match="expected dtype float32, got float64"):
        reshape_graph().run(x=[[1.0, 2, 3, 4]])  # no silent conversion


def test_float16_is_numpy_float16():
    g = reshape_graph("float16")
    x = np.array([[1.5, -2, 65504, 0.1]], dtype=np.float16)
    y = g.run(x=x)["y"]
    assert y.dtype == np.float16 and np.shares_memory(x, y) and same_bits(y, x.ravel())


def test_bfloat16_travels_as_uint16_bits():
    g = reshape_graph("bfloat16")
    assert g.inputs[0].dtype == "bfloat16"
    bits = np.array([[0x3F80, 0xC000, 0x7F80, 0x0001]], dtype=np.uint16)  # 1, -2, inf, tiny
    y = g.run(x=bits)["y"]
    assert y.dtype == np.uint16 and same_bits(y, bits.ravel())
    with pytest.raises(nodeflow.UnsupportedDType, match="numpy dtype uint16 has no nodeflow dtype"):
        reshape_graph().run(x=bits)  # uint16 only where bfloat16 is expected


def test_forward_outputs_and_grads_are_arrays(lenet, digits):
    run = lenet.forward(image=digits[0], label=digits[1])
    assert run.outputs["logits"].shape == (2, 10)
    assert not run.outputs["logits"].flags.writeable  # backward may read that memory
    grads = lenet.backward(run, {"loss": np.ones((), np.float32)})
    assert grads["image"].shape == (2, 1, 28, 28) and grads["image"].flags.writeable


def test_initializer_view_shares_the_graph_tensor(lenet):
    a, b = lenet.initializer("conv1.W"), lenet.initializer("conv1.W")
    assert np.shares_memory(a, b) and not a.flags.writeable
