// The Python module `nodeflow` (docs/python.md).
#include <pybind11/pybind11.h>

#include "python/bindings.hpp"

PYBIND11_MODULE(nodeflow, m) {
  m.doc() =
      "nodeflow: graph-node deep learning (ONNX operators, graph documents and ONNX models, "
      "inference, backward, training); docs/python.md";
  m.attr("__version__") = NODEFLOW_VERSION;
  nodeflow::python::bind_errors(m);
  nodeflow::python::bind_graph(m);
  nodeflow::python::bind_training(m);
  nodeflow::python::bind_ops(m);
}
