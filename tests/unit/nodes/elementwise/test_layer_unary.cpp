// The unary elementwise ops (Neg, Abs, Exp, Log, Sqrt, Reciprocal, Erf,
// Identity): dtype refusals, IEEE special values, integer wrap-around and
// gradients by finite differences (pre-filled buffers, lda_coeff).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "core/errors.hpp"
#include "support/error_of.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::f64;
using testing::make_node;
using testing::run_forward;

std::vector<double> apply(const std::string& op, const Tensor& x) {
  return as_doubles(run_forward(*make_node(op, {}), {x}, 1, false).outputs[0]);
}

TEST(UnaryOps, RefuseDtypesOutsideOnnx) {
  EXPECT_EQ(testing::error_of<UnsupportedDType>(
                [] { testing::infer(*make_node("Neg", {}), {TensorInfo{DType::UInt8, {2}}}); }),
            "Neg does not take dtype uint8 (input 0 (X); allowed: float32, float64, float16, bfloat16, int8, int64)");
  EXPECT_THROW(testing::infer(*make_node("Exp", {}), {TensorInfo{DType::Int64, {2}}}), UnsupportedDType);
  EXPECT_EQ(testing::infer(*make_node("Identity", {}), {TensorInfo{DType::UInt8, {kDynamicDim, 2}}})[0].shape,
            (Shape{kDynamicDim, 2}));
}

TEST(UnaryOps, GiveIeeeSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor x = Tensor::from<float>({4}, {0.0f, -1.0f, -0.0f, -std::numeric_limits<float>::infinity()});
  const auto log = apply("Log", x);
  EXPECT_EQ(log[0], -inf);
  EXPECT_TRUE(std::isnan(log[1]));
  EXPECT_TRUE(std::isnan(apply("Sqrt", x)[1]));
  const auto rec = apply("Reciprocal", x);
  EXPECT_EQ(rec[0], inf);
  EXPECT_EQ(rec[2], -inf);
  EXPECT_EQ(apply("Exp", x)[3], 0.0);
  EXPECT_EQ(apply("Abs", x)[3], inf);
  EXPECT_EQ(apply("Erf", x)[3], -1.0);
}

// Long enough for vector loops: every element, whatever its position, gets
// the IEEE result, subnormal inputs and results included.
TEST(UnaryOps, GiveIeeeResultsAtEveryPositionFloat32) {
  const float inf = std::numeric_limits<float>::infinity(), tiny = 1e-40f, least = 1e-45f;
  for (const std::int64_t n : {1, 3, 5, 8, 17, 64}) {
    const auto all = [n](float v) { return Tensor::from<float>({n}, std::vector<float>(static_cast<std::size_t>(n), v)); };
    for (const double v : apply("Sqrt", all(inf))) EXPECT_EQ(v, static_cast<double>(inf)) << n;
    for (const double v : apply("Sqrt", all(tiny))) EXPECT_EQ(v, static_cast<double>(std::sqrt(tiny))) << n;
    for (const double v : apply("Log", all(least))) EXPECT_EQ(v, static_cast<double>(std::log(least))) << n;
    for (const double v : apply("Exp", all(-100.0f))) EXPECT_EQ(v, static_cast<double>(std::exp(-100.0f))) << n;
  }
}

TEST(UnaryOps, IntegersWrapAround) {
  const Tensor x = Tensor::from<std::int8_t>({4}, {-128, -3, 0, 127});
  for (const char* op : {"Neg", "Abs"}) {
    const Tensor y = run_forward(*make_node(op, {}), {x}, 1, false).outputs[0];
    const std::vector<std::int8_t> got(y.values<std::int8_t>().begin(), y.values<std::int8_t>().end());
    EXPECT_EQ(got, (op == std::string("Neg") ? std::vector<std::int8_t>{-128, 3, 0, -127}
                                             : std::vector<std::int8_t>{-128, 3, 0, 127}))
        << op;
  }
  const Tensor e = run_forward(*make_node("Erf", {}), {Tensor::from<std::int64_t>({3}, {-7, 0, 2})}, 1, false).outputs[0];
  EXPECT_EQ(std::vector<std::int64_t>(e.values<std::int64_t>().begin(), e.values<std::int64_t>().end()),
            (std::vector<std::int64_t>{-1, 0, 0}));
  const Tensor u = Tensor::from<std::uint8_t>({2}, {0, 255});
  const Tensor id = run_forward(*make_node("Identity", {}), {u}, 1, false).outputs[0];
  EXPECT_TRUE(id.shares_buffer(u));
}

TEST(UnaryOps, GradientsMatchFiniteDifferences) {
  std::mt19937_64 rng(13);
  for (const char* op : {"Neg", "Abs", "Exp", "Log", "Sqrt", "Reciprocal", "Erf", "Identity"}) {
    for (const Shape& shape : {Shape{}, Shape{7}, Shape{2, 3, 4}}) {
      Tensor x = testing::random_uniform(shape, rng, 2.0);
      const std::string name = op;
      if (name == "Log" || name == "Sqrt" || name == "Reciprocal")
        for (double& v : x.values<double>()) v = 0.25 + std::abs(v);
      for (double lda : {1.0, 0.25}) {
        const auto r = testing::check_gradient(*make_node(op, {}, true, lda), {x}, {.seed = rng()});
        EXPECT_TRUE(r.ok) << op << " " << to_string(shape) << "\n" << r.failures;
      }
    }
  }
}

TEST(UnaryOps, AbsGradientIsZeroAtZero) {
  const auto node = make_node("Abs", {});
  const Tensor x = f64({3}, {-0.0, 0.0, -2.0});
  const auto fwd = run_forward(*node, {x});
  std::vector<Tensor> grads = {f64({3}, {1, 1, 1})};
  testing::run_backward(*node, {x}, fwd, {f64({3}, {5, 5, 5})}, grads);
  EXPECT_EQ(as_doubles(grads[0]), (std::vector<double>{1, 1, -4}));
}

TEST(UnaryOps, Float16GradientsGoThroughFloat32) {
  const auto node = make_node("Sqrt", {});
  const Tensor x = Tensor::from<half>({2}, {half(4.0f), half(0.25f)});
  const auto fwd = run_forward(*node, {x});
  EXPECT_EQ(as_doubles(fwd.outputs[0]), (std::vector<double>{2, 0.5}));
  std::vector<Tensor> grads = {Tensor(DType::Float16, {2})};
  testing::run_backward(*node, {x}, fwd, {Tensor::from<half>({2}, {half(1.0f), half(1.0f)})}, grads);
  EXPECT_EQ(as_doubles(grads[0]), (std::vector<double>{0.25, 1}));
}

}  // namespace
}  // namespace nodeflow
