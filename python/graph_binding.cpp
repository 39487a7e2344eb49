// nodeflow.Graph: load and save, the graph's tensors, inference, training-mode
// forward and backward, the weights as arrays (docs/python.md).
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/executor.hpp"
#include "python/arrays.hpp"
#include "python/bindings.hpp"
#include "python/graph_state.hpp"
#include "serialization/graph_file.hpp"
#include "serialization/json_writer.hpp"
#include "serialization/onnx.hpp"

namespace nodeflow::python {
namespace {

using State = std::shared_ptr<GraphState>;

/// A graph tensor as Python sees it.
struct TensorInfoView {
  std::string name;
  std::string dtype;              ///< nodeflow's name ("bfloat16" too)
  py::tuple shape;                ///< None for a dimension fixed at run time
  std::optional<bool> trainable;  ///< initializers only
};

TensorInfoView view(const std::string& name, const TensorInfo& info,
                    std::optional<bool> trainable = std::nullopt) {
  return {name, std::string(dtype_name(info.dtype)), shape_tuple(info.shape), trainable};
}

/// A training-mode forward pass, kept for backward.
struct PyTrainingRun {
  State state;
  TrainingRun run;
};

/// The settings and tensors of run/forward/backward: one optional positional
/// dict of tensors, keyword tensors, and the keywords threads and seed.
struct CallArgs {
  py::dict tensors;
  int threads = 1;
  std::uint64_t seed = 0;
};

// `value` as T, or a TypeError naming the keyword (pybind11's own cast error
// says neither the argument nor the type wanted).
template <typename T> T keyword_as(const py::handle& value, const char* name, const char* wanted) {
  try {
    return value.cast<T>();
  } catch (const py::cast_error&) {
    throw py::type_error(std::string(name) + ": expected " + wanted + ", got " +
                         py::repr(value).cast<std::string>());
  }
}

CallArgs call_args(const py::args& args, const py::kwargs& kwargs, bool takes_seed) {
  CallArgs c;
  if (args.size() > 1)
    throw py::type_error("expected at most one positional argument, a dict of arrays");
  if (args.size() == 1) c.tensors = py::dict(args[0]);
  for (const auto& [key, value] : kwargs) {
    const std::string name = py::str(key);
    if (name == "threads")
      c.threads = keyword_as<int>(value, "threads", "an int in the range of a C int");
    else if (name == "seed" && takes_seed)
      c.seed = keyword_as<std::uint64_t>(value, "seed", "an int in [0, 2**64)");
    else
      c.tensors[key] = value;
  }
  return c;
}

/// The arrays as tensors; `expected` gives the dtype a name wants (for bfloat16's uint16).
template <typename Expected>
TensorMap tensors_of(const py::dict& arrays, const std::string& what, Expected&& expected) {
  TensorMap out;
  for (const auto& [key, value] : arrays) {
    const std::string name = py::str(key);
    out[name] = to_tensor(value, expected(name), what + " '" + name + "'");
  }
  return out;
}

std::optional<DType> input_dtype(const Graph& graph, const std::string& name) {
  for (const GraphInput& in : graph.def().inputs)
    if (in.name == name) return in.info.dtype;
  return std::nullopt;
}

std::optional<DType> tensor_dtype(const Graph& graph, const std::string& name) {
  const auto& infos = graph.tensor_infos();
  const auto it = infos.find(name);
  if (it == infos.end()) return std::nullopt;
  return it->second.dtype;
}

TensorMap feeds_of(const Graph& graph, const py::dict& arrays) {
  return tensors_of(arrays, "graph input",
                    [&](const std::string& n) { return input_dtype(graph, n); });
}

py::dict run(const State& s, const py::args& args, const py::kwargs& kwargs) {
  const CallArgs c = call_args(args, kwargs, true);
  const TensorMap feeds = feeds_of(s->graph, c.tensors);
  const TensorMap outputs =
      reading(*s, [&] { return Executor(s->graph, {c.threads}).run(feeds, c.seed); });
  return to_arrays(outputs, feeds, s->graph);
}

PyTrainingRun forward(const State& s, const py::args& args, const py::kwargs& kwargs) {
  const CallArgs c = call_args(args, kwargs, true);
  const TensorMap feeds = feeds_of(s->graph, c.tensors);
  return {s, reading(*s, [&] { return Executor(s->graph, {c.threads}).forward(feeds, c.seed); })};
}

py::dict backward(const State& s, PyTrainingRun& r, const py::args& args,
                  const py::kwargs& kwargs) {
  const CallArgs c = call_args(args, kwargs, false);
  const TensorMap seeds = tensors_of(c.tensors, "gradient of output", [&](const std::string& n) {
    return tensor_dtype(s->graph, n);
  });
  const TensorMap grads =
      reading(*s, [&] { return Executor(s->graph, {c.threads}).backward(r.run, seeds); });
  return to_arrays(grads, seeds, s->graph);
}

State load(const std::filesystem::path& path) {
  py::gil_scoped_release release;
  return std::make_shared<GraphState>(load_graph_path(path));
}

/// True for "onnx", false for "json"; InvalidAttribute for anything else.
GraphFormat format_of(const std::string& format) {
  if (format != "json" && format != "onnx")
    throw InvalidAttribute("format: expected \"json\" or \"onnx\", got \"" + printable(format, 64) +
                           "\"");
  return format == "onnx" ? GraphFormat::Onnx : GraphFormat::Json;
}

State loads(const py::object& document, const std::string& format) {
  if (!py::isinstance<py::bytes>(document) && !py::isinstance<py::str>(document))
    throw py::type_error("loads: expected the document as str or bytes, got " +
                         py::repr(py::type::of(document)).cast<std::string>());
  const std::string bytes = py::isinstance<py::bytes>(document)
                                ? std::string(document.cast<py::bytes>())
                                : document.cast<std::string>();
  const GraphFormat f = format_of(format);
  py::gil_scoped_release release;
  return std::make_shared<GraphState>(load_graph_bytes(bytes, f));
}

py::object dumps(const State& s, const std::string& format) {
  const GraphFormat f = format_of(format);
  std::string bytes = reading(*s, [&] { return graph_bytes(s->graph, f); });
  if (f == GraphFormat::Onnx) return py::bytes(bytes);
  return py::str(bytes);
}

std::vector<TensorInfoView> inputs(const State& s) {
  std::vector<TensorInfoView> out;
  for (const GraphInput& in : s->graph.def().inputs) out.push_back(view(in.name, in.info));
  return out;
}

std::vector<TensorInfoView> outputs(const State& s) {
  std::vector<TensorInfoView> out;
  for (const std::string& name : s->graph.def().outputs)
    out.push_back(view(name, s->graph.info(name)));
  return out;
}

std::vector<TensorInfoView> initializers(const State& s) {
  std::vector<TensorInfoView> out;
  for (const Initializer& init : s->graph.def().initializers)  // dtype and shape never change
    out.push_back(view(init.name, s->graph.info(init.name), init.trainable));
  return out;
}

py::dict tensors(const State& s) {
  py::dict out;
  for (const auto& [name, info] : s->graph.tensor_infos()) out[py::str(name)] = view(name, info);
  return out;
}

const Initializer& initializer_named(const Graph& graph, const std::string& name) {
  const Initializer* init = graph.initializer(name);
  if (init == nullptr) throw InvalidGraph("'" + printable(name, 200) + "' is not an initializer");
  return *init;
}

py::array initializer(const State& s, const std::string& name) {
  const Tensor value = reading(*s, [&] { return initializer_named(s->graph, name).value; });
  return to_array(value, false);
}

void set_initializer(const State& s, const std::string& name, const py::handle& value) {
  const std::optional<DType> dtype = s->graph.initializer(name) != nullptr
                                         ? std::optional<DType>(s->graph.info(name).dtype)
                                         : std::nullopt;
  const Tensor borrowed = to_tensor(value, dtype, "initializer '" + name + "'");
  // A copy: the graph owns its weights, whatever the caller later does with the array.
  writing(*s, [&] { s->graph.set_initializer(name, borrowed.clone()); });
}

}  // namespace

void bind_graph(py::module_& m) {
  py::class_<TensorInfoView>(m, "TensorInfo",
                             "A graph tensor: name, dtype, shape (None: fixed at run time)")
      .def_readonly("name", &TensorInfoView::name)
      .def_readonly("dtype", &TensorInfoView::dtype)
      .def_readonly("shape", &TensorInfoView::shape)
      .def_readonly("trainable", &TensorInfoView::trainable, "initializers: True when trained")
      .def("__eq__",
           [](const TensorInfoView& a, const TensorInfoView& b) {
             return a.name == b.name && a.dtype == b.dtype && a.shape.equal(b.shape) &&
                    a.trainable == b.trainable;
           })
      .def("__repr__", [](const TensorInfoView& t) {
        std::string text = "TensorInfo(name=" + py::repr(py::str(t.name)).cast<std::string>() +
                           ", dtype='" + t.dtype +
                           "', shape=" + py::repr(t.shape).cast<std::string>();
        if (t.trainable) text += std::string(", trainable=") + (*t.trainable ? "True" : "False");
        return text + ")";
      });

  py::class_<PyTrainingRun>(m, "TrainingRun",
                            "A training-mode forward pass, kept for Graph.backward")
      .def_property_readonly(
          "outputs",
          [](const PyTrainingRun& r) {
            py::dict out;  // read-only: what backward reads may share their memory
            for (const auto& [name, tensor] : r.run.outputs())
              out[py::str(name)] = to_array(tensor, false);
            return out;
          },
          "The graph outputs of the forward pass, by name: read-only arrays without a copy")
      .def_property_readonly("consumed", [](const PyTrainingRun& r) { return r.run.consumed(); });

  py::class_<GraphState, State>(m, "Graph", "A validated graph (load, loads)")
      .def_property_readonly("name", [](const State& s) { return s->graph.name(); })
      .def("__repr__",
           [](const State& s) {
             const GraphDef& d = s->graph.def();
             return "<nodeflow.Graph " + py::repr(py::str(d.name)).cast<std::string>() + ": " +
                    std::to_string(d.inputs.size()) + " inputs, " +
                    std::to_string(d.outputs.size()) + " outputs, " +
                    std::to_string(d.initializers.size()) + " initializers, " +
                    std::to_string(d.nodes.size()) + " nodes>";
           })
      .def_property_readonly("inputs", &inputs, "The graph inputs: [TensorInfo]")
      .def_property_readonly("outputs", &outputs, "The graph outputs with inferred shapes")
      .def_property_readonly("initializers", &initializers,
                             "The initializers (weights) with their trainable flag")
      .def_property_readonly("tensors", &tensors,
                             "Every tensor's dtype and inferred shape, by name")
      .def("check", &tensors,
           "The graph is valid (loading raised otherwise): every tensor's dtype and inferred "
           "shape, by name, as `nodeflow check` lists them")
      .def_property_readonly("parameter_count",
                             [](const State& s) { return s->graph.parameter_count(); })
      .def("run", &run,
           "run(inputs=None, /, *, threads=1, seed=0, **arrays) -> dict[str, ndarray]: inference")
      .def("forward", &forward,
           "forward(inputs=None, /, *, threads=1, seed=0, **arrays) -> TrainingRun: "
           "training-mode forward (seed drives Dropout)")
      .def("backward", &backward, py::arg("run"),
           "backward(run, grads=None, /, *, threads=1, **arrays) -> dict[str, ndarray]: the "
           "gradients of the float graph inputs and trainable initializers, seeded with the "
           "given output gradients (others zero)")
      .def("initializer", &initializer, py::arg("name"),
           "The initializer's value: a read-only array over the graph's tensor (no copy)")
      .def("set_initializer", &set_initializer, py::arg("name"), py::arg("value"),
           "Replaces the initializer's value by a copy of `value` (same dtype and shape)")
      .def(
          "save",
          [](const State& s, const std::filesystem::path& path) {
            return reading(*s, [&] { return save_graph_path(path, s->graph); });
          },
          py::arg("path"),
          "Saves atomically: an ONNX model for a name ending in .onnx, else the JSON document; "
          "returns the ONNX writer's warnings")
      .def("dumps", &dumps, py::arg("format") = "json",
           "The JSON document (str) or, for format=\"onnx\", the ModelProto (bytes)");

  m.def("load", &load, py::arg("path"),
        "Loads a graph file: an ONNX model for a name ending in .onnx, else a JSON document");
  m.def("loads", &loads, py::arg("document"), py::arg("format") = "json",
        "Loads a graph from memory: JSON text (str or bytes), or with format=\"onnx\" the "
        "bytes of a ModelProto");
}

}  // namespace nodeflow::python
