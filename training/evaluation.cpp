#include "training/evaluation.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/executor.hpp"

namespace nodeflow::training {
namespace {

bool is_input(const Graph& g, const std::string& name, DType* dtype) {
  for (const GraphInput& in : g.def().inputs)
    if (in.name == name) {
      *dtype = in.info.dtype;
      return true;
    }
  return false;
}

bool is_output(const Graph& g, const std::string& name) {
  const auto& outs = g.def().outputs;
  return std::find(outs.begin(), outs.end(), name) != outs.end();
}

// "'x' float32 [?, 2], 'y' int64 [?]": what a binding to a graph input may name.
std::string graph_inputs_text(const Graph& g) {
  std::string out;
  for (const GraphInput& in : g.def().inputs)
    out += (out.empty() ? "'" : ", '") + in.name + "' " + std::string(dtype_name(in.info.dtype)) +
           " " + to_string(in.info.shape);
  return out.empty() ? "none" : out;
}

std::string graph_outputs_text(const Graph& g) {
  std::string out;
  for (const std::string& name : g.def().outputs) out += (out.empty() ? "'" : ", '") + name + "'";
  return out.empty() ? "none" : out;
}

}  // namespace

void check_bindings(const Graph& graph, const Bindings& b) {
  const auto input_dtype = [&](const char* key, const std::string& name) {
    DType dtype{};
    if (!is_input(graph, name, &dtype))
      throw InvalidGraph(std::string("bindings.") + key + ": '" + name +
                         "' is not a graph input (the graph's inputs: " +
                         graph_inputs_text(graph) + ")");
    return dtype;
  };
  input_dtype("input", b.input);
  const DType dtype = input_dtype("label", b.label);
  if (dtype != DType::Int64)
    throw InvalidGraph("bindings.label: graph input '" + b.label +
                       "' must be int64 class indices, not " + std::string(dtype_name(dtype)));
  for (const auto& [key, name] :
       {std::pair{"loss", &b.loss}, std::pair{"prediction", &b.prediction}}) {
    if (!is_output(graph, *name))
      throw InvalidGraph(std::string("bindings.") + key + ": '" + *name +
                         "' is not a graph output (the graph's outputs: " +
                         graph_outputs_text(graph) + ")");
    if (!is_float(graph.info(*name).dtype))
      throw InvalidGraph(std::string("bindings.") + key + ": output '" + *name +
                         "' is not a float tensor");
  }
  // The loss is one number: a known dimension other than 1 rules that out
  // now, not at the first training step.
  const Shape& loss_shape = graph.info(b.loss).shape;
  if (std::any_of(loss_shape.begin(), loss_shape.end(),
                  [](std::int64_t d) { return d != 1 && d != kDynamicDim; }))
    throw InvalidGraph("bindings.loss: output '" + b.loss + "' has shape " + to_string(loss_shape) +
                       ", not one element");
}

void check_feeds(const Graph& graph, const Bindings& bindings, const Dataset& data,
                 std::int64_t batch, const std::string& pass) {
  const auto rows = static_cast<std::int64_t>(data.size());
  std::vector<std::int64_t> sizes;  // an empty dataset feeds nothing
  if (rows > 0) sizes.push_back(std::min(batch, rows));
  if (rows > batch && rows % batch != 0) sizes.push_back(rows % batch);
  for (const auto& [key, name] :
       {std::pair{"input", &bindings.input}, std::pair{"label", &bindings.label}}) {
    const Shape& shape = graph.info(*name).shape;
    if (shape.empty() || shape[0] == kDynamicDim) continue;
    for (const std::int64_t size : sizes)
      if (size != shape[0])
        throw InvalidGraph(std::string("bindings.") + key + ": graph input '" + *name +
                           "' has the fixed batch dimension " + std::to_string(shape[0]) + " (" +
                           to_string(shape) + "), but " + pass + " feeds a batch of " +
                           std::to_string(size) + " (" + std::to_string(rows) +
                           " samples); make its first dimension null (any size)");
  }
  const Shape& scores = graph.info(bindings.prediction).shape;
  if (scores.size() == 2 && scores[1] != kDynamicDim && scores[1] != data.num_classes) {
    // Say where a class past the graph's comes from: an npy dataset has
    // 1 + its largest label, and one wrong label is the usual cause.
    std::string why;
    const auto past = std::find_if(data.labels.begin(), data.labels.end(),
                                   [&](std::int64_t l) { return l >= scores[1]; });
    if (past != data.labels.end())
      why = " (label " + std::to_string(*past) + " of sample " +
            std::to_string(past - data.labels.begin()) + " of the set fed to " + pass + ")";
    throw InvalidGraph("bindings.prediction: output '" + bindings.prediction + "' has " +
                       std::to_string(scores[1]) + " classes (" + to_string(scores) +
                       "), the dataset " + std::to_string(data.num_classes) + why);
  }
}

std::string binding_where(const char* key, const std::string& tensor) {
  return std::string("bindings.") + key + " ('" + tensor + "')";
}

double scalar_value(const Tensor& t) {
  if (t.numel() != 1 || !is_float(t.dtype()))
    throw ShapeMismatch("expected a one-element float tensor, got " +
                        std::string(dtype_name(t.dtype())) + " " + to_string(t.shape()));
  return visit_float_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return static_cast<double>(t.data<T>()[0]);
  });
}

Evaluation evaluate(const Graph& graph, const Dataset& data, const Bindings& bindings,
                    std::int64_t batch_size, const ExecutorOptions& options) {
  check_bindings(graph, bindings);
  if (batch_size < 1) throw InvalidAttribute("evaluation batch size must be >= 1");
  check_feeds(graph, bindings, data, batch_size,
              "evaluation (batch size " + std::to_string(batch_size) + ")");
  const Executor executor(graph, options);
  Evaluation result{Tensor(graph.info(bindings.prediction).dtype,
                           {static_cast<std::int64_t>(data.size()), data.num_classes}),
                    ConfusionMatrix(data.num_classes), 0.0};
  double loss_sum = 0.0;
  std::size_t offset_bytes = 0;
  for (std::size_t begin = 0; begin < data.size(); begin += static_cast<std::size_t>(batch_size)) {
    const std::size_t end = std::min(data.size(), begin + static_cast<std::size_t>(batch_size));
    Batch batch = slice(data, begin, end);
    TensorMap out = executor.run({{bindings.input, batch.samples}, {bindings.label, batch.labels}});
    const Tensor& scores = out.at(bindings.prediction);
    const Shape want{static_cast<std::int64_t>(end - begin), data.num_classes};
    if (scores.shape() != want)
      throw ShapeMismatch(binding_where("prediction", bindings.prediction) + ": has shape " +
                          to_string(scores.shape()) + ", expected " + to_string(want));
    std::memcpy(result.predictions.raw() + offset_bytes, scores.raw(), scores.nbytes());
    offset_bytes += scores.nbytes();
    result.confusion.add(scores, {data.labels.begin() + static_cast<std::ptrdiff_t>(begin),
                                  data.labels.begin() + static_cast<std::ptrdiff_t>(end)});
    loss_sum += with_context(binding_where("loss", bindings.loss),
                             [&] { return scalar_value(out.at(bindings.loss)); }) *
                static_cast<double>(end - begin);
  }
  result.loss = data.size() == 0 ? 0.0 : loss_sum / static_cast<double>(data.size());
  return result;
}

}  // namespace nodeflow::training
