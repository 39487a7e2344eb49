#pragma once
// Graph documents the server tests send.
#include <string>

namespace nodeflow::testing {

/// A MaxPool over image [N, 1, 4, 4] (kernel 2, stride 2) into `pooled`, its
/// nodes placed at [10, 20] and [-5.5, 1e3] on the editor's canvas.
inline std::string pool_document(const std::string& kernel = "[2, 2]") {
  return R"({"format": "nodeflow.graph", "version": 1, "name": "pool",
    "inputs": [{"name": "image", "dtype": "float32", "shape": [null, 1, 4, 4]}],
    "outputs": ["pooled", "scaled"],
    "initializers": [{"name": "two", "dtype": "float32", "shape": [1], "data": [2.0]}],
    "nodes": [
      {"op_type": "MaxPool", "name": "pool1", "inputs": ["image"], "specified_outputs_name": ["pooled"],
       "attributes": {"kernel_shape": )" +
         kernel + R"(, "strides": [2, 2]}, "position": [10, 20]},
      {"op_type": "Mul", "name": "scale", "inputs": ["pooled", "two"], "specified_outputs_name": ["scaled"],
       "position": [-5.5, 1e3]}]})";
}

}  // namespace nodeflow::testing
