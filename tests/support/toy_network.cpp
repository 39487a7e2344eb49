#include "support/toy_network.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "support/graph_parts.hpp"

namespace nodeflow::testing {

GraphDef toy_graph(const ToyGraphOptions& options) {
  const auto param = [&](Shape shape, std::vector<float> v) {
    Tensor t = f32(std::move(shape), std::move(v));
    return options.dtype == DType::Float32 ? t : t.cast(options.dtype);
  };
  GraphDef g;
  g.name = "toy";
  g.inputs = {{"x", {options.dtype, {kDynamicDim, 2}}}, {"y", {DType::Int64, {kDynamicDim}}}};
  g.initializers = {{"W1", param({4, 2}, {0.5f, -0.3f, 0.2f, 0.4f, -0.6f, 0.1f, 0.3f, 0.3f}), true},
                    {"B1", param({4}, {0, 0, 0, 0}), true},
                    {"W2", param({2, 4}, {0.2f, -0.5f, 0.3f, 0.1f, -0.4f, 0.3f, 0.2f, -0.2f}), true},
                    {"B2", param({2}, {0, 0}), true}};
  const Attributes linear{{"transB", std::int64_t{1}}};
  std::string x = "x";
  if (options.batch_norm) {
    g.initializers.push_back({"scale", param({2}, {1.5f, 0.5f}), true});
    g.initializers.push_back({"B", param({2}, {0.1f, -0.2f}), true});
    g.initializers.push_back({"mean", param({2}, {0.2f, -0.1f}), false});
    g.initializers.push_back({"var", param({2}, {1.0f, 2.0f}), false});
    g.nodes.push_back(node_def("BatchNormalization", "bn", {"x", "scale", "B", "mean", "var"}));
    x = "bn";
  }
  g.nodes.push_back(node_def("Gemm", "fc1", {x, "W1", "B1"}, linear));
  g.nodes.push_back(node_def("Tanh", "tanh", {"fc1"}));
  if (options.dropout) g.nodes.push_back(node_def("Dropout", "drop", {"tanh"}, {{"ratio", 0.5}}));
  g.nodes.push_back(node_def("Gemm", "logits", {options.dropout ? "drop" : "tanh", "W2", "B2"}, linear));
  g.nodes.push_back(node_def("SoftmaxCrossEntropyLoss", "xent", {"logits", "y"}));
  g.nodes.back().specified_outputs_name = std::vector<std::string>{"loss"};
  g.outputs = {"logits", "loss"};
  return g;
}

training::Dataset toy_data(DType dtype) {
  Tensor x = f32({8, 2}, {0, 0, 0, 1, 1, 0, 1, 1, 0.5f, 0.2f, 0.9f, 0.8f, 0.1f, 0.7f, 0.6f, 0.7f});
  return training::Dataset{dtype == DType::Float32 ? x : x.cast(dtype), {0, 0, 0, 1, 0, 1, 0, 1}, 2};
}

}  // namespace nodeflow::testing
