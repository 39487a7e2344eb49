// nodeflow.Trainer and nodeflow.evaluate: training on NumPy samples and labels
// with a training configuration (docs/training-config.md), a Python progress
// callback that can stop it, and the per-epoch history (docs/python.md).
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "python/arrays.hpp"
#include "python/bindings.hpp"
#include "python/graph_state.hpp"
#include "training/evaluation.hpp"
#include "training/datasets.hpp"
#include "training/trainer.hpp"

namespace nodeflow::python {
namespace {

using namespace nodeflow::training;
using State = std::shared_ptr<GraphState>;

TrainConfig config_of(const py::object& config) {
  if (py::isinstance<py::str>(config)) return parse_train_config(config.cast<std::string>());
  const std::string text = py::str(py::module_::import("json").attr("dumps")(config));
  return parse_train_config(text);
}

/// Samples (borrowed when their layout allows) and labels (int64, copied).
Dataset dataset(const py::handle& samples, const py::handle& labels, std::int64_t num_classes) {
  Dataset d;
  d.samples = to_tensor(samples, std::nullopt, "samples");
  const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast> a(
      py::module_::import("numpy").attr("ravel")(labels));
  d.labels.assign(a.data(), a.data() + a.size());
  d.num_classes = num_classes;
  return d;
}

// A struct's members as a dict: fields(s, "a", &S::a, "b", &S::b, ...).
template <typename S>
void put_fields(py::dict&, const S&) {}
template <typename S, typename M, typename... Rest>
void put_fields(py::dict& d, const S& s, const char* key, M S::*member, Rest... rest) {
  d[key] = s.*member;
  put_fields(d, s, rest...);
}
template <typename S, typename... Fields>
py::dict fields(const S& s, Fields... f) {
  py::dict d;
  put_fields(d, s, f...);
  return d;
}

py::dict metrics_dict(const EpochMetrics& m) {
  using M = EpochMetrics;
  return fields(m, "epoch", &M::epoch, "lr", &M::lr, "train_loss", &M::train_loss, "train_accuracy",
                &M::train_accuracy, "test_loss", &M::test_loss, "test_accuracy", &M::test_accuracy,
                "seconds", &M::seconds, "samples_per_second", &M::samples_per_second);
}

py::dict progress_dict(const Progress& p) {
  return fields(p, "epoch", &Progress::epoch, "batch", &Progress::batch, "batches",
                &Progress::batches, "step", &Progress::step, "loss", &Progress::loss, "accuracy",
                &Progress::accuracy, "lr", &Progress::lr);
}

/// A Trainer of one graph; training locks the graph for writing.
class PyTrainer {
 public:
  PyTrainer(State state, const py::object& config)
      : state_(std::move(state)), trainer_(writing(*state_, [&, c = config_of(config)] {
          return std::make_unique<Trainer>(state_->graph, c);
        })) {}

  py::list fit(const py::handle& samples, const py::handle& labels, const py::handle& test_samples,
               const py::handle& test_labels, std::int64_t num_classes,
               const py::object& callback) {
    const Dataset train = dataset(samples, labels, num_classes);
    const Dataset test = dataset(test_samples, test_labels, num_classes);
    const py::object* cb = callback.is_none() ? nullptr : &callback;
    // Called on the training thread with the GIL released: takes it for the
    // callback; None or a true value goes on, a false one stops.
    const ProgressCallback progress = [cb](const Progress& p) {
      py::gil_scoped_acquire gil;
      const py::object answer = (*cb)(progress_dict(p));
      return answer.is_none() || static_cast<bool>(py::bool_(answer));
    };
    const std::vector<EpochMetrics> history = writing(*state_, [&] {
      trainer_->set_progress_callback(cb != nullptr ? progress : ProgressCallback());
      struct Clear {  // the callback refers to `callback`, which dies with this call
        Trainer& t;
        ~Clear() { t.set_progress_callback({}); }
      } clear{*trainer_};
      return trainer_->fit(train, test);
    });
    py::list out;
    for (const EpochMetrics& m : history) out.append(metrics_dict(m));
    return out;
  }

  bool stopped() const { return trainer_->stopped(); }
  std::int64_t steps() const { return trainer_->steps(); }

 private:
  State state_;
  std::unique_ptr<Trainer> trainer_;
};

py::dict evaluate_graph(const State& s, const py::handle& samples, const py::handle& labels,
                        std::int64_t num_classes, const py::object& config) {
  const TrainConfig c = config.is_none() ? TrainConfig{} : config_of(config);
  const Dataset data = dataset(samples, labels, num_classes);
  const Evaluation ev = reading(*s, [&] {
    return evaluate(s->graph, data, c.bindings, c.eval_batch_size, c.executor_options());
  });
  py::dict d;
  d["loss"] = ev.loss;
  d["accuracy"] = ev.confusion.accuracy();
  d["predictions"] = to_array(ev.predictions, true);
  return d;
}

py::tuple load_data(const std::string& data) {
  const TrainTestData d = [&] {
    py::gil_scoped_release release;
    return load_dataset(parse_dataset_source(data));
  }();
  const auto labels = [](const Dataset& set) {
    return py::array_t<std::int64_t>(static_cast<py::ssize_t>(set.labels.size()), set.labels.data());
  };
  return py::make_tuple(to_array(d.train.samples, true), labels(d.train),
                        to_array(d.test.samples, true), labels(d.test), d.train.num_classes);
}

}  // namespace

void bind_training(py::module_& m) {
  py::class_<PyTrainer>(m, "Trainer",
                        "Trains a graph in place with a training configuration (a dict or JSON "
                        "text, docs/training-config.md)")
      .def(py::init<State, const py::object&>(), py::arg("graph"), py::arg("config"))
      .def("fit", &PyTrainer::fit, py::arg("samples"), py::arg("labels"), py::arg("test_samples"),
           py::arg("test_labels"), py::arg("num_classes"), py::arg("callback") = py::none(),
           "config epochs of shuffled batches, each followed by an evaluation of the test set; "
           "callback(progress: dict) after every step, returning False stops. Returns the "
           "history: one dict of metrics per epoch")
      .def_property_readonly("stopped", &PyTrainer::stopped,
                             "True when the callback stopped the last fit")
      .def_property_readonly("steps", &PyTrainer::steps, "Optimizer steps taken so far");
  m.def("evaluate", &evaluate_graph, py::arg("graph"), py::arg("samples"), py::arg("labels"),
        py::arg("num_classes"), py::arg("config") = py::none(),
        "Inference over a dataset: {'loss', 'accuracy', 'predictions'}; the configuration's "
        "bindings and eval_batch_size (defaults without one)");
  m.def("load_dataset", &load_data, py::arg("data") = "mnist",
        "The dataset `nodeflow train --data DATA` reads (mnist[:DIR], fashion-mnist[:DIR], "
        "npy:DIR; docs/training-config.md, \"Datasets\"): (train_samples, train_labels, "
        "test_samples, test_labels, num_classes)");
}

}  // namespace nodeflow::python
