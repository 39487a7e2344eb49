#include "support/mnist_fixtures.hpp"

#include <fstream>

namespace nodeflow::testing {

std::string linear_classifier_json(const std::string& bias_source) {
  return R"({"format": "nodeflow.graph", "version": 1, "name": "linear",
  "inputs": [{"name": "image", "dtype": "float32", "shape": [null, 1, 28, 28]},
             {"name": "label", "dtype": "int64", "shape": [null]}],
  "outputs": ["logits", "loss"],
  "initializers": [
    {"name": "W", "dtype": "float32", "shape": [10, 784], "init": {"rule": "zeros"}, "trainable": true},
    {"name": "B", "dtype": "float32", "shape": [10], "trainable": true, )" +
         bias_source + R"(}],
  "nodes": [
    {"op_type": "Flatten", "name": "flatten", "inputs": ["image"], "attributes": {"axis": 1}},
    {"op_type": "Gemm", "name": "fc", "inputs": ["flatten", "W", "B"],
     "specified_outputs_name": ["logits"], "attributes": {"transB": 1}},
    {"op_type": "SoftmaxCrossEntropyLoss", "name": "xent", "inputs": ["logits", "label"],
     "specified_outputs_name": ["loss"]}]})";
}

void write_blank_digits(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  std::string blank = "{\"data\": [0";
  for (int i = 1; i < 1000 * 784; ++i) blank += ",0";
  blank += "]}";
  for (int d = 0; d < 10; ++d)
    std::ofstream(dir / (std::to_string(d) + ".json"), std::ios::binary) << blank;
}

}  // namespace nodeflow::testing
