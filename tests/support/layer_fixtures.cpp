#include "support/layer_fixtures.hpp"

#include <gtest/gtest.h>

namespace nodeflow::testing {

Tensor pattern(Shape shape, std::int64_t mul, std::int64_t mod, std::int64_t off, double div, DType dtype) {
  Tensor t(DType::Float64, std::move(shape));
  auto v = t.values<double>();
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<double>((static_cast<std::int64_t>(i) * mul) % mod - off) / div;
  return dtype == DType::Float64 ? t : t.cast(dtype);
}

Tensor f64(Shape shape, std::initializer_list<double> values) {
  return Tensor::from<double>(std::move(shape), values);
}

Tensor random_uniform(Shape shape, std::mt19937_64& rng, double bound) {
  std::uniform_real_distribution<double> dist(-bound, bound);
  Tensor t(DType::Float64, std::move(shape));
  for (double& v : t.values<double>()) v = dist(rng);
  return t;
}

Tensor i64(Shape shape, std::initializer_list<std::int64_t> values) {
  return Tensor::from<std::int64_t>(std::move(shape), values);
}

std::vector<double> as_doubles(const Tensor& t) {
  const Tensor d = t.cast(DType::Float64);
  const auto v = d.values<double>();
  return {v.begin(), v.end()};
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

std::vector<TensorInfo> infer(const Node& node, const std::vector<TensorInfo>& inputs,
                              const std::vector<const Tensor*>& constants, std::size_t num_outputs) {
  InferContext ctx;
  for (const TensorInfo& info : inputs) ctx.inputs.push_back(&info);
  ctx.constants = constants;
  ctx.constants.resize(inputs.size(), nullptr);
  ctx.num_outputs = num_outputs;
  return node.infer(ctx);
}

}  // namespace nodeflow::testing
