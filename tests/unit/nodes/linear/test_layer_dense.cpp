// Gemm (ONNX Gemm-13), MatMul (MatMul-13) and Add (Add-14): values against
// numpy, broadcasting and its gradient reduction, shape inference with
// dynamic dimensions, errors, and finite-difference gradients.
#include <gtest/gtest.h>

#include <random>

#include "core/errors.hpp"
#include "support/error_of.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::check_gradient;
using testing::error_of;
using testing::make_node;
using testing::pattern;
using testing::random_uniform;
using testing::run_forward;

// numpy's pattern (see layer_fixtures.hpp): a = ((arange(n)*5) % 7 - 3) / 2, b = ((arange(n)*3) % 11 - 5) / 4.
Tensor a_pattern(Shape s, DType dt = DType::Float64) { return pattern(std::move(s), 5, 7, 3, 2.0, dt); }
Tensor b_pattern(Shape s, DType dt = DType::Float64) { return pattern(std::move(s), 3, 11, 5, 4.0, dt); }
// c = ((arange(n)*1) % 9 - 1) / 8
Tensor c_pattern(Shape s, DType dt = DType::Float64) { return pattern(std::move(s), 1, 9, 1, 8.0, dt); }

TEST(LayerGemm, MatchesNumpy) {
  // numpy: 0.5 * A.T @ B.T + 2.0 * C, A (3,2), B (4,3), C (4,) broadcast over rows.
  auto tt = make_node("Gemm", {{"alpha", 0.5}, {"beta", 2.0}, {"transA", std::int64_t{1}}, {"transB", std::int64_t{1}}});
  for (DType dt : {DType::Float64, DType::Float32}) {
    const Tensor y = run_forward(*tt, {a_pattern({3, 2}, dt), b_pattern({4, 3}, dt), c_pattern({4}, dt)}, 1, false).outputs[0];
    EXPECT_EQ(y.shape(), (Shape{2, 4}));
    EXPECT_EQ(as_doubles(y), (std::vector<double>{0.875, -0.9375, -0.6875, -0.4375, -0.5625, 0.9375, -0.3125, -0.1875}));
  }
  // numpy: A @ B + C with A (2,3), B (3,2), C (2,1) broadcast over columns.
  auto nn = make_node("Gemm", {});
  const Tensor y = run_forward(*nn, {a_pattern({2, 3}), b_pattern({3, 2}), c_pattern({2, 1})}, 1, false).outputs[0];
  EXPECT_EQ(as_doubles(y), (std::vector<double>{2.0, 1.625, 1.125, 1.875}));
  // Without C: A @ B - C's contribution (1st row -1/8, 2nd row 0).
  const Tensor y2 = run_forward(*nn, {a_pattern({2, 3}), b_pattern({3, 2})}, 1, false).outputs[0];
  EXPECT_EQ(as_doubles(y2), (std::vector<double>{2.125, 1.75, 1.125, 1.875}));
}

TEST(LayerGemm, GradientsForEveryTransposeAndBiasShape) {
  std::mt19937_64 rng(5);
  const std::int64_t m = 3, k = 4, n = 2;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (const Shape& c : {Shape{}, Shape{n}, Shape{m, 1}, Shape{1, n}, Shape{m, n}, Shape{1}}) {
        auto node = make_node("Gemm", {{"alpha", 0.75}, {"beta", -1.5}, {"transA", std::int64_t{ta}}, {"transB", std::int64_t{tb}}},
                              true, 0.5);
        std::vector<Tensor> in{random_uniform(ta ? Shape{k, m} : Shape{m, k}, rng), random_uniform(tb ? Shape{n, k} : Shape{k, n}, rng)};
        in.push_back(random_uniform(c, rng));
        const testing::GradCheckResult r = check_gradient(*node, in);
        EXPECT_TRUE(r.ok) << "transA " << ta << " transB " << tb << " C " << to_string(c) << "\n" << r.failures;
      }
}

TEST(LayerGemm, InfersShapesAndRefusesMismatches) {
  auto node = make_node("Gemm", {{"transA", std::int64_t{1}}});
  auto out = testing::infer(*node, {{DType::Float32, {5, kDynamicDim}}, {DType::Float32, {5, 7}}, {DType::Float32, {7}}});
  EXPECT_EQ(out[0].shape, (Shape{kDynamicDim, 7}));
  EXPECT_EQ(error_of<ShapeMismatch>([&] { testing::infer(*node, {{DType::Float32, {4, 3}}, {DType::Float32, {5, 7}}}); }),
            "inner dimensions differ: A [4, 3] (transA) gives K = 4, B [5, 7] gives K = 5");
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              testing::infer(*node, {{DType::Float32, {5, 3}}, {DType::Float32, {5, 7}}, {DType::Float32, {2, 7}}});
            }),
            "input 2 (C) has shape [2, 7], which does not broadcast to the output [3, 7]");
  EXPECT_EQ(error_of<ShapeMismatch>([&] { testing::infer(*node, {{DType::Float32, {5}}, {DType::Float32, {5, 7}}}); }),
            "input 0 (A) has shape [5]; Gemm needs a matrix (rank 2)");
  EXPECT_EQ(error_of<UnsupportedDType>([&] { testing::infer(*node, {{DType::Int64, {5, 3}}, {DType::Int64, {5, 7}}}); }),
            "Gemm does not take dtype int64 (input 0 (A); allowed: float32, float64, float16, bfloat16)");
}

TEST(LayerMatMul, MatchesNumpyForBatchedAndVectorOperands) {
  auto node = make_node("MatMul", {});
  // numpy.matmul of (2,1,2,3) and (3,3,2): batch dims broadcast to (2,3).
  Tensor y = run_forward(*node, {a_pattern({2, 1, 2, 3}), b_pattern({3, 3, 2})}, 1, false).outputs[0];
  EXPECT_EQ(y.shape(), (Shape{2, 3, 2, 2}));
  EXPECT_EQ(as_doubles(y), (std::vector<double>{2.125, 1.75, 1.125, 1.875, -1.5, -1.875, -1.25, -1.875,
                                                1.75, -1.375, 1.875, -1.5, -0.75, -1.5, -1.75, -1.375,
                                                1.625, -1.875, 1.875, -1.875, -1.5, 1.875, -1.375, 1.75}));
  // (3,) @ (2,3,4) -> (2,4); (2,3) @ (3,) -> (2,); (3,) @ (3,) -> ().
  y = run_forward(*node, {a_pattern({3}), b_pattern({2, 3, 4})}, 1, false).outputs[0];
  EXPECT_EQ(y.shape(), (Shape{2, 4}));
  EXPECT_EQ(as_doubles(y), (std::vector<double>{0.875, 0.5, 0.125, -0.25, 0.5, 0.125, -0.25, 0.75}));
  y = run_forward(*node, {a_pattern({2, 3}), b_pattern({3})}, 1, false).outputs[0];
  EXPECT_EQ(y.shape(), (Shape{2}));
  EXPECT_EQ(as_doubles(y), (std::vector<double>{1.375, 0.625}));
  y = run_forward(*node, {a_pattern({3}), b_pattern({3})}, 1, false).outputs[0];
  EXPECT_EQ(y.shape(), (Shape{}));
  EXPECT_EQ(as_doubles(y), (std::vector<double>{1.375}));
  // float16 computes in float32: the same dyadic values come out exactly.
  y = run_forward(*node, {a_pattern({2, 3}, DType::Float16), b_pattern({3}, DType::Float16)}, 1, false).outputs[0];
  EXPECT_EQ(y.dtype(), DType::Float16);
  EXPECT_EQ(as_doubles(y), (std::vector<double>{1.375, 0.625}));
}

TEST(LayerMatMul, GradientsSumOverBroadcastBatches) {
  std::mt19937_64 rng(9);
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{3, 4}, {4, 2}},       {{2, 1, 3, 4}, {3, 4, 2}}, {{4}, {2, 4, 3}}, {{2, 3, 4}, {4}},
      {{4}, {4}},             {{1, 3, 4}, {2, 4, 2}},    {{2, 2, 3}, {1, 3, 1}}};
  for (const auto& [a, b] : cases) {
    auto node = make_node("MatMul", {}, true, 2.0);
    const testing::GradCheckResult r = check_gradient(*node, {random_uniform(a, rng), random_uniform(b, rng)});
    EXPECT_TRUE(r.ok) << to_string(a) << " @ " << to_string(b) << "\n" << r.failures;
  }
}

TEST(LayerMatMul, InfersShapesAndRefusesMismatches) {
  auto node = make_node("MatMul", {});
  auto out = testing::infer(*node, {{DType::Float32, {kDynamicDim, 1, 5, 3}}, {DType::Float32, {4, 3, 2}}});
  EXPECT_EQ(out[0].shape, (Shape{kDynamicDim, 4, 5, 2}));
  out = testing::infer(*node, {{DType::Float32, {kDynamicDim, 3}}, {DType::Float32, {3}}});
  EXPECT_EQ(out[0].shape, (Shape{kDynamicDim}));
  EXPECT_EQ(error_of<ShapeMismatch>([&] { testing::infer(*node, {{DType::Float32, {2, 3}}, {DType::Float32, {4, 2}}}); }),
            "inner dimensions differ: A [2, 3] has K = 3, B [4, 2] has K = 4");
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              testing::infer(*node, {{DType::Float32, {2, 2, 3}}, {DType::Float32, {3, 3, 2}}});
            }),
            "batch dimensions of A [2, 2, 3] and B [3, 3, 2] do not broadcast");
}

TEST(LayerAdd, BroadcastsLikeNumpy) {
  auto node = make_node("Add", {});
  // numpy: A (2,3,1) + B (4,) -> (2,3,4).
  for (DType dt : {DType::Float64, DType::Float32, DType::BFloat16}) {
    const Tensor c = run_forward(*node, {a_pattern({2, 3, 1}, dt), b_pattern({4}, dt)}, 1, false).outputs[0];
    EXPECT_EQ(c.shape(), (Shape{2, 3, 4}));
    EXPECT_EQ(as_doubles(c), (std::vector<double>{-2.75, -2.0, -1.25, -0.5, -0.25, 0.5, 1.25, 2.0, -1.25, -0.5, 0.25, 1.0,
                                                  -2.25, -1.5, -0.75, 0.0, 0.25, 1.0, 1.75, 2.5, -0.75, 0.0, 0.75, 1.5}))
        << dtype_name(dt);
  }
}

TEST(LayerAdd, GradientIsReducedOverBroadcastAxes) {
  auto node = make_node("Add", {});
  const std::vector<Tensor> in{a_pattern({2, 3, 1}), b_pattern({4})};
  const testing::ForwardResult f = run_forward(*node, in, 1, true);
  // dC = 1 everywhere: dA sums 4 ones per element, dB sums 6; pre-filled 10 stays (+=).
  std::vector<Tensor> grads{pattern({2, 3, 1}, 0, 1, -10, 1.0), pattern({4}, 0, 1, -10, 1.0)};
  std::vector<Tensor> dy{pattern({2, 3, 4}, 0, 1, -1, 1.0)};
  testing::run_backward(*node, in, f, dy, grads);
  EXPECT_EQ(as_doubles(grads[0]), std::vector<double>(6, 14.0));
  EXPECT_EQ(as_doubles(grads[1]), std::vector<double>(4, 16.0));

  std::mt19937_64 rng(2);
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3}, {2, 3}}, {{2, 3, 1}, {4}}, {{1, 3}, {2, 1}}, {{}, {2, 2}}, {{3, 1, 2}, {1, 4, 1}}};
  for (const auto& [a, b] : cases) {
    auto n = make_node("Add", {}, true, 0.5);
    const testing::GradCheckResult r = check_gradient(*n, {random_uniform(a, rng), random_uniform(b, rng)});
    EXPECT_TRUE(r.ok) << to_string(a) << " + " << to_string(b) << "\n" << r.failures;
  }
}

TEST(LayerAdd, InfersDynamicBroadcastAndRefusesMismatch) {
  auto node = make_node("Add", {});
  auto out = testing::infer(*node, {{DType::Float32, {kDynamicDim, 1, 4}}, {DType::Float32, {3, 1}}});
  EXPECT_EQ(out[0].shape, (Shape{kDynamicDim, 3, 4}));
  out = testing::infer(*node, {{DType::Float32, {kDynamicDim, 4}}, {DType::Float32, {5, 4}}});
  EXPECT_EQ(out[0].shape, (Shape{5, 4}));
  EXPECT_EQ(error_of<ShapeMismatch>([&] { testing::infer(*node, {{DType::Float32, {2, 3}}, {DType::Float32, {4}}}); }),
            "input 0 [2, 3] and input 1 [4] cannot be broadcast (axis 1 of the result: 3 vs 4)");
  EXPECT_EQ(error_of<UnsupportedDType>([&] { testing::infer(*node, {{DType::Float32, {2}}, {DType::Float64, {2}}}); }),
            "input 1 (B) has dtype float64 but input 0 (A) has float32; Add needs one dtype");
}

}  // namespace
}  // namespace nodeflow
