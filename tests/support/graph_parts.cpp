#include "support/graph_parts.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <span>

namespace nodeflow::testing {

NodeDef node_def(const std::string& op_type, const std::string& name, std::vector<std::string> inputs,
                 Attributes attributes, bool training) {
  NodeDef n;
  n.op_type = op_type;
  n.name = name;
  n.inputs = std::move(inputs);
  n.attributes = std::move(attributes);
  n.training = training;
  return n;
}

Tensor f32(Shape shape, const std::vector<float>& values) {
  return Tensor::from<float>(std::move(shape), std::span<const float>(values));
}

void expect_values(const Tensor& got, const std::vector<float>& want, double tolerance) {
  ASSERT_EQ(got.numel(), static_cast<std::int64_t>(want.size()));
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got.data<float>()[i], want[i], tolerance * (1.0 + std::abs(want[i]))) << "element " << i;
}

}  // namespace nodeflow::testing
