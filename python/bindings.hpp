#pragma once
// The parts of the module `nodeflow` (module.cpp calls them in this order):
// each adds its classes and functions to `m`.
#include <pybind11/pybind11.h>

namespace nodeflow::python {

namespace py = pybind11;

/// nodeflow.Error and its subclasses, and the translation of library errors.
void bind_errors(py::module_& m);
/// nodeflow.Graph, TrainingRun, load, loads.
void bind_graph(py::module_& m);
/// nodeflow.Trainer, evaluate, load_dataset.
void bind_training(py::module_& m);
/// nodeflow.ops.
void bind_ops(py::module_& m);

}  // namespace nodeflow::python
