#pragma once
// The pieces tests write graphs and expectations from: a node description, a
// float32 tensor of given values, a tensor's elements as a vector, and a
// comparison of float32 results (support/graph_compare.hpp compares tensors
// bit for bit).
#include <string>
#include <vector>

#include "core/graph.hpp"
#include "core/tensor.hpp"

namespace nodeflow::testing {

/// A node of `op_type` named `name` reading `inputs` (in the graph's training
/// mode unless `training` is false).
NodeDef node_def(const std::string& op_type, const std::string& name, std::vector<std::string> inputs,
                 Attributes attributes = {}, bool training = true);

/// A float32 tensor of `shape` holding `values` (row-major).
Tensor f32(Shape shape, const std::vector<float>& values);

/// The elements of `t` (of element type T), comparable with a vector.
template <typename T>
std::vector<T> values_of(const Tensor& t) {
  const auto v = t.values<T>();
  return {v.begin(), v.end()};
}

/// Each float32 element of `got` within tolerance * (1 + |want|) of `want`
/// (a test failure naming the element otherwise); 2e-6 is a few float32 roundings.
void expect_values(const Tensor& got, const std::vector<float>& want, double tolerance = 2e-6);

}  // namespace nodeflow::testing
