// Relu (ONNX Relu-14), Sigmoid (Sigmoid-13), Tanh (Tanh-13), Softmax and
// LogSoftmax (Softmax-13, LogSoftmax-13): values against numpy, stability for
// large inputs, and finite-difference gradients.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "core/errors.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::check_gradient;
using testing::expect_near;
using testing::make_node;
using testing::pattern;
using testing::run_forward;

const Tensor kLayerX = testing::f64({8}, {-3.0, -0.5, 0.0, 0.25, 2.0, 40.0, -40.0, -800.0});

TEST(LayerActivations, MatchNumpy) {
  // numpy: np.maximum(x, 0), 1/(1+np.exp(-x)), np.tanh(x) in float64.
  const std::vector<double> relu{0.0, 0.0, 0.0, 0.25, 2.0, 40.0, 0.0, 0.0};
  const std::vector<double> sigmoid{0.04742587317756678, 0.3775406687981454, 0.5, 0.5621765008857981,
                                    0.8807970779778825,  1.0,                4.24835425529159e-18, 0.0};
  const std::vector<double> tanh{-0.9950547536867305, -0.46211715726000974, 0.0, 0.24491866240370913,
                                 0.9640275800758169,  1.0,                  -1.0, -1.0};
  EXPECT_EQ(as_doubles(run_forward(*make_node("Relu", {}), {kLayerX}, 1, false).outputs[0]), relu);
  const auto s = as_doubles(run_forward(*make_node("Sigmoid", {}), {kLayerX}, 1, false).outputs[0]);
  for (std::size_t i = 0; i < s.size(); ++i) EXPECT_NEAR(s[i], sigmoid[i], 1e-16 + 1e-15 * sigmoid[i]) << i;
  expect_near(as_doubles(run_forward(*make_node("Tanh", {}), {kLayerX}, 1, false).outputs[0]), tanh, 1e-16);
  // float32 and float16 agree within their precision; sigmoid(-800) underflows to 0, never NaN.
  for (DType dt : {DType::Float32, DType::Float16}) {
    const double tol = dt == DType::Float32 ? 1e-7 : 1e-3;
    const Tensor x = kLayerX.cast(dt);
    expect_near(as_doubles(run_forward(*make_node("Sigmoid", {}), {x}, 1, false).outputs[0]), sigmoid, tol);
    expect_near(as_doubles(run_forward(*make_node("Tanh", {}), {x}, 1, false).outputs[0]), tanh, tol);
  }
}

TEST(LayerActivations, ReluPassesNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto y = as_doubles(run_forward(*make_node("Relu", {}), {testing::f64({2}, {nan, -1.0})}, 1, false).outputs[0]);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 0.0);
}

TEST(LayerActivations, GradientsMatchFiniteDifferences) {
  // Relu's kink at 0 is avoided: no element within 1e-3 of it.
  const Tensor x = pattern({2, 3, 4}, 7, 13, 6, 3.0);
  for (const char* op : {"Relu", "Sigmoid", "Tanh"}) {
    const Tensor shifted = [&] {
      Tensor t = x.clone();
      for (double& v : t.values<double>()) v += 0.1;
      return t;
    }();
    for (double lda : {1.0, -0.5}) {
      auto node = make_node(op, {}, true, lda);
      const testing::GradCheckResult r = check_gradient(*node, {shifted});
      EXPECT_TRUE(r.ok) << op << " lda " << lda << "\n" << r.failures;
    }
  }
  // Relu's derivative at exactly 0 is 0 (PyTorch's convention).
  auto relu = make_node("Relu", {});
  const std::vector<Tensor> in{testing::f64({1}, {0.0})};
  const testing::ForwardResult f = run_forward(*relu, in, 1, true);
  std::vector<Tensor> dx{testing::f64({1}, {0.0})};
  testing::run_backward(*relu, in, f, {testing::f64({1}, {1.0})}, dx);
  EXPECT_EQ(as_doubles(dx[0]), std::vector<double>{0.0});
}

TEST(LayerActivations, RefuseIntegerDtypes) {
  try {
    testing::infer(*make_node("Tanh", {}), {{DType::UInt8, {3}}});
    FAIL();
  } catch (const UnsupportedDType& e) {
    EXPECT_STREQ(e.what(), "Tanh does not take dtype uint8 (input 0 (input); allowed: float32, float64, float16, bfloat16)");
  }
}

TEST(LayerSoftmax, MatchesNumpyAlongAnyAxis) {
  // X = ((arange(12)*5) % 7 - 3) / 2 reshaped (2,3,2); numpy:
  //   e = exp(x - x.max(axis, keepdims)); e / e.sum(axis, keepdims)
  //   x - m - log(exp(x - m).sum(axis, keepdims))
  const Tensor x = pattern({2, 3, 2}, 5, 7, 3, 2.0);
  const auto soft = as_doubles(run_forward(*make_node("Softmax", {{"axis", std::int64_t{1}}}), {x}, 1, false).outputs[0]);
  expect_near(soft,
              {0.03911257327068745, 0.5740969929676946, 0.1752903921400367, 0.07769557914857059,
               0.7855970345892759, 0.3482074278837349, 0.16425162762508783, 0.03911257327068745,
               0.7361247243125939, 0.1752903921400367, 0.09962364806231831, 0.7855970345892759},
              1e-15);
  // Default axis -1.
  const auto logsoft = as_doubles(run_forward(*make_node("LogSoftmax", {}), {x}, 1, false).outputs[0]);
  expect_near(logsoft,
              {-2.5788897342925496, -0.07888973429254957, -0.3132616875182228, -1.3132616875182228,
               -0.3132616875182228, -1.3132616875182228, -0.3132616875182228, -1.3132616875182228,
               -0.3132616875182228, -1.3132616875182228, -2.5788897342925496, -0.07888973429254957},
              1e-15);
  // axis = -2 is axis 1.
  EXPECT_EQ(as_doubles(run_forward(*make_node("Softmax", {{"axis", std::int64_t{-2}}}), {x}, 1, false).outputs[0]), soft);
}

TEST(LayerSoftmax, StableForHugeLogitsInFloat32) {
  // numpy (float32): logsoftmax([[1e8, 0, -1e8], [3, 3, 3]]) = [[0, -1e8, -2e8], [-log 3] * 3].
  const Tensor x = Tensor::from<float>({2, 3}, {1e8f, 0.0f, -1e8f, 3.0f, 3.0f, 3.0f});
  const auto y = as_doubles(run_forward(*make_node("LogSoftmax", {}), {x}, 1, false).outputs[0]);
  expect_near(y, {0.0, -1e8, -2e8, -1.0986123085021973, -1.0986123085021973, -1.0986123085021973}, 1e-6);
  const auto p = as_doubles(run_forward(*make_node("Softmax", {}), {x}, 1, false).outputs[0]);
  expect_near(p, {1.0, 0.0, 0.0, 1.0 / 3, 1.0 / 3, 1.0 / 3}, 1e-7);
}

TEST(LayerSoftmax, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(4);
  const Tensor x = testing::random_uniform({2, 3, 4}, rng, 2.0);
  for (const char* op : {"Softmax", "LogSoftmax"})
    for (std::int64_t axis : {0, 1, 2, -1}) {
      auto node = make_node(op, {{"axis", axis}}, true, 0.5);
      const testing::GradCheckResult r = check_gradient(*node, {x});
      EXPECT_TRUE(r.ok) << op << " axis " << axis << "\n" << r.failures;
    }
}

TEST(LayerSoftmax, RefusesAxisOutsideTheRank) {
  try {
    testing::infer(*make_node("Softmax", {{"axis", std::int64_t{3}}}), {{DType::Float32, {kDynamicDim, 3, 4}}});
    FAIL();
  } catch (const InvalidAttribute& e) {
    EXPECT_STREQ(e.what(), "attributes.axis: expected an integer in [-3, 2] for input rank 3, got 3");
  }
  EXPECT_EQ(testing::infer(*make_node("LogSoftmax", {}), {{DType::Float32, {kDynamicDim, 3}}})[0].shape,
            (Shape{kDynamicDim, 3}));
}

}  // namespace
}  // namespace nodeflow
