// LayerNormalization-17, InstanceNormalization-22, GroupNormalization-21:
// values against a plain double-precision reference, shapes and dtypes of the
// outputs, load-time refusals, and finite-difference gradients (the += into
// pre-filled buffers included). LayerNormalization and GroupNormalization
// compute their statistics in float32 even for float64 inputs (stash_type 1),
// so their checks take a larger step and tolerance than InstanceNormalization's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "core/errors.hpp"
#include "support/error_of.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::check_gradient;
using testing::error_of;
using testing::expect_near;
using testing::make_node;
using testing::random_uniform;
using testing::run_backward;
using testing::run_forward;

// Float32 statistics: finite differences need a larger step (and tolerance)
// than the float32 rounding of x.
testing::GradCheckOptions float32_statistics(std::size_t num_outputs = 1, std::uint64_t seed = 1) {
  testing::GradCheckOptions o;
  o.step = 1e-3;
  o.rtol = 2e-3;
  o.atol = 2e-3;
  o.seed = seed;
  o.num_outputs = num_outputs;
  return o;
}

// The reference: rows of `cols` values normalised, the affine parameter of
// element (r, c) at param(r, c).
template <typename Param>
std::vector<double> reference(const std::vector<double>& x, std::int64_t cols, double eps, Param&& param) {
  std::vector<double> y(x.size());
  for (std::size_t r = 0; r * cols < x.size(); ++r) {
    double mean = 0, var = 0;
    for (std::int64_t c = 0; c < cols; ++c) mean += x[r * cols + c];
    mean /= static_cast<double>(cols);
    for (std::int64_t c = 0; c < cols; ++c) var += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
    var /= static_cast<double>(cols);
    for (std::int64_t c = 0; c < cols; ++c) {
      const auto [g, b] = param(static_cast<std::int64_t>(r), c);
      y[r * cols + c] = (x[r * cols + c] - mean) / std::sqrt(var + eps) * g + b;
    }
  }
  return y;
}

TEST(LayerNormalization, ValuesStatisticsAndTheirShapes) {
  std::mt19937_64 rng(3);
  const Tensor x = random_uniform({2, 3, 4}, rng, 2.0);
  const Tensor scale = random_uniform({3, 4}, rng);
  const Tensor bias = random_uniform({3, 4}, rng);
  auto node = make_node("LayerNormalization", {{"axis", std::int64_t{-2}}});
  const auto out = run_forward(*node, {x, scale, bias}, 3).outputs;
  const std::vector<double> s = as_doubles(scale), b = as_doubles(bias);
  expect_near(as_doubles(out[0]),
              reference(as_doubles(x), 12, 1e-5, [&](std::int64_t, std::int64_t c) {
                return std::pair{s[c], b[c]};
              }),
              1e-5);
  EXPECT_EQ(out[0].dtype(), DType::Float64);
  EXPECT_EQ(out[1].dtype(), DType::Float32);
  EXPECT_EQ(out[1].shape(), (Shape{2, 1, 1}));
  EXPECT_EQ(out[2].shape(), (Shape{2, 1, 1}));
  const auto inferred = testing::infer(*node, {{DType::Float16, {kDynamicDim, 3, 4}}, {DType::Float16, {4}}}, {}, 3);
  EXPECT_EQ(inferred[0].dtype, DType::Float16);
  EXPECT_EQ(inferred[1].dtype, DType::Float32);
  EXPECT_EQ(inferred[1].shape, (Shape{kDynamicDim, 1, 1}));
}

TEST(LayerNormalization, ScaleBroadcastsOverTheNormalizedShapeAndBIsOptional) {
  std::mt19937_64 rng(4);
  const Tensor x = random_uniform({3, 2, 5}, rng, 3.0);
  const Tensor scale = random_uniform({5}, rng);
  auto node = make_node("LayerNormalization", {{"axis", std::int64_t{1}}, {"epsilon", 1e-3}});
  const std::vector<double> s = as_doubles(scale);
  expect_near(as_doubles(run_forward(*node, {x, scale}).outputs[0]),
              reference(as_doubles(x), 10, 1e-3, [&](std::int64_t, std::int64_t c) {
                return std::pair{s[c % 5], 0.0};
              }),
              1e-5);
  for (const std::uint64_t seed : {1u, 2u}) {
    const auto r = check_gradient(*node, {x, scale, random_uniform({2, 1}, rng)}, float32_statistics(3, seed));
    EXPECT_TRUE(r.ok) << r.failures;
  }
}

TEST(LayerNormalization, GradientsOfXScaleBiasAndTheStatistics) {
  std::mt19937_64 rng(5);
  for (const std::int64_t axis : {-1, 0, 1, 2}) {
    const Tensor x = random_uniform({2, 3, 4}, rng, 2.0);
    const Shape norm(x.shape().begin() + (axis < 0 ? 2 : axis), x.shape().end());
    auto node = make_node("LayerNormalization", {{"axis", axis}}, true, 0.5);
    const auto r =
        check_gradient(*node, {x, random_uniform(norm, rng), random_uniform(norm, rng)}, float32_statistics(3));
    EXPECT_TRUE(r.ok) << "axis " << axis << "\n" << r.failures;
  }
}

// Each row's sum is taken in the pass that writes the previous row's Y: a
// row's Y, mean and inverse standard deviation are still, bit for bit, those
// of the row alone (whole 64-column quads of lane groups, a group past them,
// columns past the last group; with and without B).
TEST(LayerNormalization, EachRowAsIfNormalizedAlone) {
  std::mt19937_64 rng(8);
  for (const std::int64_t cols : {768, 86, 3})
    for (const bool with_bias : {true, false}) {
      const std::int64_t rows = 5;
      const Tensor x = random_uniform({rows, cols}, rng, 3.0).cast(DType::Float32);
      std::vector<Tensor> params{random_uniform({cols}, rng).cast(DType::Float32)};
      if (with_bias) params.push_back(random_uniform({cols}, rng).cast(DType::Float32));
      const auto inputs = [&](const Tensor& xs) {
        std::vector<Tensor> in{xs};
        in.insert(in.end(), params.begin(), params.end());
        return in;
      };
      auto node = make_node("LayerNormalization", {});
      const auto all = run_forward(*node, inputs(x), 3).outputs;
      for (std::int64_t r = 0; r < rows; ++r) {
        Tensor row(DType::Float32, {1, cols});
        std::copy_n(x.data<float>() + r * cols, cols, row.data<float>());
        const auto alone = run_forward(*node, inputs(row), 3).outputs;
        const std::string where = std::to_string(cols) + " columns, row " + std::to_string(r);
        EXPECT_TRUE(std::equal(alone[0].data<float>(), alone[0].data<float>() + cols, all[0].data<float>() + r * cols))
            << where;
        EXPECT_EQ(alone[1].data<float>()[0], all[1].data<float>()[r]) << where;
        EXPECT_EQ(alone[2].data<float>()[0], all[2].data<float>()[r]) << where;
      }
    }
}

// Enough rows for the backward's blocks of rows (each of the 8 chunks takes
// 4 or 5 of the 37), and columns past the last whole 16-lane group.
TEST(LayerNormalization, GradientsInBlocksOfRows) {
  std::mt19937_64 rng(6);
  for (const std::int64_t cols : {20, 7}) {
    const Tensor x = random_uniform({37, cols}, rng, 2.0);
    auto node = make_node("LayerNormalization", {}, true, 0.5);
    const auto r = check_gradient(*node, {x, random_uniform({cols}, rng), random_uniform({cols}, rng)},
                                  float32_statistics(3));
    EXPECT_TRUE(r.ok) << cols << " columns\n" << r.failures;
  }
}

// Scale's and B's gradients are the same whether X's is wanted or not.
TEST(LayerNormalization, ParameterGradientsWithoutTheInputs) {
  std::mt19937_64 rng(7);
  const std::vector<Tensor> in{random_uniform({40, 24}, rng, 2.0).cast(DType::Float32),
                               random_uniform({24}, rng).cast(DType::Float32),
                               random_uniform({24}, rng).cast(DType::Float32)};
  const Tensor dy = random_uniform({40, 24}, rng).cast(DType::Float32);
  auto node = make_node("LayerNormalization", {});
  const testing::ForwardResult fwd = run_forward(*node, in, 1, true);
  std::vector<Tensor> all{Tensor(DType::Float32, {40, 24}), Tensor(DType::Float32, {24}), Tensor(DType::Float32, {24})};
  std::vector<Tensor> params{Tensor(), Tensor(DType::Float32, {24}), Tensor(DType::Float32, {24})};
  run_backward(*node, in, fwd, {dy}, all, {});
  run_backward(*node, in, fwd, {dy}, params, {});
  EXPECT_EQ(as_doubles(all[1]), as_doubles(params[1]));
  EXPECT_EQ(as_doubles(all[2]), as_doubles(params[2]));
}

TEST(LayerNormalization, Float16ComputesInFloat32) {
  std::mt19937_64 rng(6);
  const Tensor x = random_uniform({4, 8}, rng, 4.0).cast(DType::Float16);
  const Tensor scale = random_uniform({8}, rng).cast(DType::Float16);
  auto node = make_node("LayerNormalization", {});
  const auto out = run_forward(*node, {x, scale}, 2).outputs;
  EXPECT_EQ(out[0].dtype(), DType::Float16);
  EXPECT_EQ(out[1].dtype(), DType::Float32);
  const std::vector<double> s = as_doubles(scale);
  expect_near(as_doubles(out[0]),
              reference(as_doubles(x), 8, 1e-5, [&](std::int64_t, std::int64_t c) { return std::pair{s[c], 0.0}; }),
              1e-2);
}

TEST(LayerNormalization, Float16GradientsMatchFloat64Ones) {
  std::mt19937_64 rng(10);
  const std::vector<Tensor> wide{random_uniform({3, 8}, rng, 2.0), random_uniform({8}, rng), random_uniform({8}, rng)};
  const Tensor dy = random_uniform({3, 8}, rng);
  auto node = make_node("LayerNormalization", {});
  std::vector<std::vector<double>> grads;
  for (const DType dt : {DType::Float64, DType::Float16}) {
    std::vector<Tensor> in;
    for (const Tensor& t : wide) in.push_back(t.cast(dt));
    const testing::ForwardResult f = run_forward(*node, in);
    std::vector<Tensor> g{Tensor(dt, {3, 8}), Tensor(dt, {8}), Tensor(dt, {8})};
    testing::run_backward(*node, in, f, {dy.cast(dt)}, g);
    std::vector<double> all;
    for (const Tensor& t : g)
      for (const double v : as_doubles(t)) all.push_back(v);
    grads.push_back(all);
  }
  expect_near(grads[1], grads[0], 3e-2);
}

TEST(LayerNormalization, Refusals) {
  auto node = make_node("LayerNormalization", {{"axis", std::int64_t{3}}});
  EXPECT_NE(error_of<InvalidAttribute>([&] { testing::infer(*node, {{DType::Float32, {2, 3, 4}}, {DType::Float32, {4}}}); })
                .find("axis"),
            std::string::npos);
  auto plain = make_node("LayerNormalization", {});
  EXPECT_EQ(error_of<ShapeMismatch>([&] { testing::infer(*plain, {{DType::Float32, {2, 3}}, {DType::Float32, {2}}}); }),
            "input 1 (Scale) has shape [2], which does not broadcast to the normalized shape [3] (X.shape[axis:])");
  EXPECT_NE(error_of<UnsupportedDType>([&] { testing::infer(*plain, {{DType::Float32, {2, 3}}, {DType::Float64, {3}}}); })
                .find("input 1 (Scale) has dtype float64"),
            std::string::npos);
  EXPECT_NE(error_of<InvalidAttribute>([&] { make_node("LayerNormalization", {{"stash_type", std::int64_t{11}}}); })
                .find("stash_type"),
            std::string::npos);
}

TEST(InstanceNormalization, ValuesAndExactFloat64Gradients) {
  std::mt19937_64 rng(7);
  const Tensor x = random_uniform({2, 3, 2, 3}, rng, 2.0);
  const Tensor scale = random_uniform({3}, rng), bias = random_uniform({3}, rng);
  auto node = make_node("InstanceNormalization", {{"epsilon", 1e-2}});
  const std::vector<double> s = as_doubles(scale), b = as_doubles(bias);
  expect_near(as_doubles(run_forward(*node, {x, scale, bias}).outputs[0]),
              reference(as_doubles(x), 6, 1e-2, [&](std::int64_t r, std::int64_t) {
                return std::pair{s[r % 3], b[r % 3]};
              }),
              1e-13);
  for (const Shape& shape : {Shape{2, 3, 2, 3}, Shape{1, 3, 5}, Shape{3, 3}}) {
    auto n = make_node("InstanceNormalization", {}, true, 0.75);
    const auto r = check_gradient(*n, {random_uniform(shape, rng, 2.0), random_uniform({3}, rng), random_uniform({3}, rng)});
    EXPECT_TRUE(r.ok) << to_string(shape) << "\n" << r.failures;
  }
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              testing::infer(*node, {{DType::Float32, {2, 3, 4}}, {DType::Float32, {2}}, {DType::Float32, {3}}});
            }),
            "input 1 (scale) has shape [2]; it needs [C] = [3]");
}

TEST(GroupNormalization, PerChannelScaleValuesAndGradients) {
  std::mt19937_64 rng(8);
  const Tensor x = random_uniform({2, 6, 2, 2}, rng, 2.0);
  const Tensor scale = random_uniform({6}, rng), bias = random_uniform({6}, rng);
  auto node = make_node("GroupNormalization", {{"num_groups", std::int64_t{3}}});
  const std::vector<double> s = as_doubles(scale), b = as_doubles(bias);
  // Row r = (n, group): channel (r % 3) * 2 + c / 4.
  expect_near(as_doubles(run_forward(*node, {x, scale, bias}).outputs[0]),
              reference(as_doubles(x), 8, 1e-5, [&](std::int64_t r, std::int64_t c) {
                const std::int64_t ch = (r % 3) * 2 + c / 4;
                return std::pair{s[ch], b[ch]};
              }),
              1e-5);
  for (const std::int64_t groups : {1, 2, 3, 6}) {
    auto n = make_node("GroupNormalization", {{"num_groups", groups}});
    const auto r = check_gradient(
        *n, {random_uniform({2, 6, 3}, rng, 2.0), random_uniform({6}, rng), random_uniform({6}, rng)},
        float32_statistics());
    EXPECT_TRUE(r.ok) << groups << " groups\n" << r.failures;
  }
  auto four = make_node("GroupNormalization", {{"num_groups", std::int64_t{4}}});
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              testing::infer(*four, {{DType::Float32, {2, 6, 4}}, {DType::Float32, {6}}, {DType::Float32, {6}}});
            }),
            "input 0 (X) has 6 channels, which num_groups 4 does not divide into groups of at least one channel");
  EXPECT_EQ(error_of<UnsupportedDType>([&] {
              testing::infer(*four, {{DType::Float32, {2, 4, 4}}, {DType::Float32, {4}}, {DType::Float64, {4}}});
            }),
            "input 2 (bias) has dtype float64 but input 0 (X) has float32; GroupNormalization needs one dtype");
  EXPECT_NE(error_of<InvalidAttribute>([&] { make_node("GroupNormalization", {}); }).find("num_groups"),
            std::string::npos);
}

TEST(Normalization, ThreadCountDoesNotChangeResults) {
  std::mt19937_64 rng(9);
  const Tensor x = random_uniform({64, 48}, rng, 3.0).cast(DType::Float32);
  const Tensor scale = random_uniform({48}, rng).cast(DType::Float32);
  const Tensor dy = random_uniform({64, 48}, rng).cast(DType::Float32);
  auto node = make_node("LayerNormalization", {});
  std::vector<std::vector<double>> results;
  for (const int threads : {1, 2, 3}) {
    const std::vector<Tensor> in{x, scale, Tensor(DType::Float32, {48})};
    const testing::RunSettings settings{.threads = threads};
    const testing::ForwardResult fwd = run_forward(*node, in, 1, true, settings);
    std::vector<Tensor> grads{Tensor(DType::Float32, {64, 48}), Tensor(DType::Float32, {48}),
                              Tensor(DType::Float32, {48})};
    run_backward(*node, in, fwd, {dy}, grads, settings);
    std::vector<double> all = as_doubles(fwd.outputs[0]);
    for (const Tensor& g : grads)
      for (const double v : as_doubles(g)) all.push_back(v);
    results.push_back(all);
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
}

}  // namespace
}  // namespace nodeflow
