"""Library errors arrive as nodeflow.Error subclasses with the library's message."""
import numpy as np
import pytest

import nodeflow
from conftest import LENET, graph_document


def test_hierarchy():
    for name in ("InvalidGraph", "InvalidAttribute", "ShapeMismatch", "UnsupportedDType",
                 "IoError", "RunError", "InvalidConfig"):
        assert issubclass(getattr(nodeflow, name), nodeflow.Error)
    assert issubclass(nodeflow.Error, Exception)


def test_bad_file(tmp_path):
    with pytest.raises(nodeflow.IoError, match=f"cannot read graph {tmp_path}/missing.json: "
                                                "No such file or directory"):
        nodeflow.load(tmp_path / "missing.json")


def test_bad_json():
    with pytest.raises(nodeflow.InvalidGraph,
                       match="^invalid JSON: parse error at line 1, column 2"):
        nodeflow.loads("{")


def test_bad_node_names_its_place():
    doc = graph_document([{"name": "x", "dtype": "float32", "shape": [1, 1, 4, 4]}], ["y"],
                         [{"op_type": "MaxPool", "name": "pool1", "inputs": ["x"],
                           "specified_outputs_name": ["y"],
                           "attributes": {"kernel_shape": [2, 0]}}])
    with pytest.raises(nodeflow.InvalidAttribute,
                       match=r"^nodes\[0\] \(pool1\)\.attributes\.kernel_shape: "):
        nodeflow.loads(doc)


def test_bad_onnx():
    with pytest.raises(nodeflow.InvalidGraph, match="^model: not a valid ModelProto"):
        nodeflow.loads(b"\xff\xff\xff", format="onnx")
    with pytest.raises(nodeflow.InvalidAttribute,
                       match='^format: expected "json" or "onnx", got "xml"'):
        nodeflow.loads("{}", format="xml")
    with pytest.raises(nodeflow.InvalidAttribute, match='^format: expected "json" or "onnx"'):
        nodeflow.load(LENET).dumps("xml")


def test_unknown_and_missing_inputs(lenet, digits):
    image, label = digits
    with pytest.raises(nodeflow.InvalidGraph, match="^'img' is not a graph input$"):
        lenet.run(img=image, image=image, label=label)
    with pytest.raises(nodeflow.InvalidGraph, match="^graph input 'label' is missing$"):
        lenet.run(image=image)


def test_wrong_dtype_and_shape(lenet, digits):
    image, label = digits
    with pytest.raises(nodeflow.UnsupportedDType,
                       match="^graph input 'image': expected dtype float32, got float64$"):
        lenet.run(image=image.astype(np.float64), label=label)
    with pytest.raises(nodeflow.ShapeMismatch, match="^graph input 'image': expected shape "):
        lenet.run(image=image[:, :, :14], label=label)
    with pytest.raises(nodeflow.UnsupportedDType,
                       match="^graph input 'label': numpy dtype int32 has no nodeflow dtype"):
        lenet.run(image=image, label=label.astype(np.int32))


def test_backward_errors(lenet, digits):
    image, label = digits
    run = lenet.forward(image=image, label=label)
    with pytest.raises(nodeflow.InvalidGraph,
                       match="^gradient given for 'image', which is not a graph output$"):
        lenet.backward(run, image=image)
    lenet.backward(run, loss=np.float32(1))
    with pytest.raises(nodeflow.RunError, match="^backward was already run on this TrainingRun"):
        lenet.backward(run, loss=np.float32(1))


def test_initializer_errors():
    g = nodeflow.load(LENET)
    with pytest.raises(nodeflow.InvalidGraph, match="^'nope' is not an initializer$"):
        g.initializer("nope")
    with pytest.raises(nodeflow.ShapeMismatch):
        g.set_initializer("fc3.B", np.zeros(3, np.float32))
    with pytest.raises(nodeflow.Error, match="threads"):
        g.run(image=np.zeros((1, 1, 28, 28), np.float32), label=np.zeros(1, np.int64), threads=0)


def test_wrong_python_arguments_are_type_errors_naming_them(lenet, digits):
    image, label = digits
    with pytest.raises(TypeError, match="^threads: expected an int in the range of a C int, got "
                                        "1099511627776$"):
        lenet.run(image=image, label=label, threads=2**40)
    with pytest.raises(TypeError, match=r"^seed: expected an int in \[0, 2\*\*64\), got -1$"):
        lenet.forward(image=image, label=label, seed=-1)
    with pytest.raises(TypeError, match="^loads: expected the document as str or bytes, got "
                                        "<class 'NoneType'>$"):
        nodeflow.loads(None)
