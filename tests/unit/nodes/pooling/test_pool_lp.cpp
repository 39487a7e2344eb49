// LpPool (docs/pooling.md, "Values", "Backward"): (sum |x|^p)^(1/p) over the
// window's input elements; dx = dy * sign(x) * |x|^(p-1) / y^(p-1).
#include <gtest/gtest.h>

#include <cmath>

#include "core/errors.hpp"
#include "support/gradcheck.hpp"

namespace nodeflow {
namespace {

using ints = std::vector<std::int64_t>;

std::vector<double> lp(const Attributes& attrs, const Tensor& x) {
  auto node = testing::make_node("LpPool", attrs);
  const Tensor y = testing::run_forward(*node, {x}).outputs[0].cast(DType::Float64);
  return {y.values<double>().begin(), y.values<double>().end()};
}

std::vector<double> lp_grad(const Attributes& attrs, const Tensor& x, const Tensor& dy,
                            const Tensor& prefill, double lda = 1.0) {
  auto node = testing::make_node("LpPool", attrs, true, lda);
  const auto fwd = testing::run_forward(*node, {x});
  std::vector<Tensor> grads{prefill.clone()};
  testing::run_backward(*node, {x}, fwd, {dy}, grads);
  return {grads[0].values<double>().begin(), grads[0].values<double>().end()};
}

TEST(LpPool, NormsOfEachWindow) {
  // p 2 (default): 3-4-5.
  EXPECT_EQ(lp({{"kernel_shape", ints{2}}}, Tensor::from<double>({1, 1, 2}, {3, 4})),
            (std::vector<double>{5}));
  // p 1 takes absolute values.
  EXPECT_EQ(lp({{"kernel_shape", ints{3}}, {"p", std::int64_t{1}}},
               Tensor::from<double>({1, 1, 3}, {-1, 2, -3})),
            (std::vector<double>{6}));
  // p 3 with a negative input: (8 + 1)^(1/3).
  const auto p3 = lp({{"kernel_shape", ints{2}}, {"p", std::int64_t{3}}},
                     Tensor::from<double>({1, 1, 2}, {-2, 1}));
  ASSERT_EQ(p3.size(), 1u);
  EXPECT_NEAR(p3[0], 2.0800838230519041, 1e-14);
}

TEST(LpPool, PaddingContributesNothing) {
  EXPECT_EQ(lp({{"kernel_shape", ints{2}}, {"pads", ints{1, 1}}},
               Tensor::from<double>({1, 1, 2}, {3, 4})),
            (std::vector<double>{3, 5, 4}));
  // 2-D with ceil_mode: the last column window holds one input column.
  const auto y =
      lp({{"kernel_shape", ints{2, 2}}, {"strides", ints{2, 2}}, {"ceil_mode", std::int64_t{1}}},
         Tensor::from<double>({1, 1, 2, 3}, {1, 2, 2, 2, 4, 0}));
  EXPECT_EQ(y, (std::vector<double>{5, 2}));  // sqrt(1 + 4 + 4 + 16); sqrt(4 + 0)
}

TEST(LpPool, FloatAndHalfAccumulateWithoutOverflow) {
  const std::vector<float> f{3, 4};
  EXPECT_EQ(
      lp({{"kernel_shape", ints{2}}}, Tensor::from<float>({1, 1, 2}, std::span<const float>(f))),
      (std::vector<double>{5}));
  // 300^2 + 400^2 = 250000 overflows float16 (max 65504); float32 sums it.
  const std::vector<half> h{half(300.0f), half(400.0f)};
  EXPECT_EQ(
      lp({{"kernel_shape", ints{2}}}, Tensor::from<half>({1, 1, 2}, std::span<const half>(h))),
      (std::vector<double>{500}));
}

TEST(LpPool, RefusesIntegerInputs) {
  auto node = testing::make_node("LpPool", {{"kernel_shape", ints{2}}});
  EXPECT_THROW(testing::run_forward(*node, {Tensor(DType::UInt8, {1, 1, 2})}), UnsupportedDType);
}

TEST(LpPoolBackward, GradientFormula) {
  const Tensor zero2(DType::Float64, {1, 1, 2});
  const Tensor one = Tensor::from<double>({1, 1, 1}, {1});
  // p 2: x / y.
  EXPECT_EQ(
      lp_grad({{"kernel_shape", ints{2}}}, Tensor::from<double>({1, 1, 2}, {3, 4}), one, zero2),
      (std::vector<double>{0.6, 0.8}));
  // p 1: sign(x), 0 at x = 0.
  EXPECT_EQ(lp_grad({{"kernel_shape", ints{3}}, {"p", std::int64_t{1}}},
                    Tensor::from<double>({1, 1, 3}, {-1, 2, 0}),
                    Tensor::from<double>({1, 1, 1}, {2}), Tensor(DType::Float64, {1, 1, 3})),
            (std::vector<double>{-2, 2, 0}));
  // p 3: sign(x) x^2 / y^2 with y^2 = 9^(2/3).
  const auto g3 = lp_grad({{"kernel_shape", ints{2}}, {"p", std::int64_t{3}}},
                          Tensor::from<double>({1, 1, 2}, {-1, 2}), one, zero2);
  const double y2 = std::pow(9.0, 2.0 / 3.0);
  EXPECT_NEAR(g3[0], -1 / y2, 1e-14);
  EXPECT_NEAR(g3[1], 4 / y2, 1e-14);
}

TEST(LpPoolBackward, ZeroOutputGivesZeroGradient) {
  for (std::int64_t p : {1, 2, 3}) {
    const auto g = lp_grad({{"kernel_shape", ints{2}}, {"p", p}}, Tensor(DType::Float64, {1, 1, 2}),
                           Tensor::from<double>({1, 1, 1}, {1}), Tensor(DType::Float64, {1, 1, 2}));
    EXPECT_EQ(g, (std::vector<double>{0, 0})) << "p " << p;
  }
}

TEST(LpPoolBackward, AccumulatesScaledIntoAPrefilledGradient) {
  // Overlapping windows {0,1} and {1,2} of [3, 4, 0]: y = 5 and 4.
  const auto g = lp_grad({{"kernel_shape", ints{2}}}, Tensor::from<double>({1, 1, 3}, {3, 4, 0}),
                         Tensor::from<double>({1, 1, 2}, {1, 1}),
                         Tensor::from<double>({1, 1, 3}, {1, 1, 1}), 0.5);
  EXPECT_NEAR(g[0], 1 + 0.5 * 0.6, 1e-15);
  EXPECT_NEAR(g[1], 1 + 0.5 * (0.8 + 1.0), 1e-15);
  EXPECT_EQ(g[2], 1);
}

TEST(LpPoolBackward, SavesXAndYWithoutCopies) {
  auto node = testing::make_node("LpPool", {{"kernel_shape", ints{2}}});
  const Tensor x = Tensor::from<float>({1, 1, 3}, {1, 2, 3});
  const auto fwd = testing::run_forward(*node, {x});
  ASSERT_EQ(fwd.saved.size(), 2u);
  EXPECT_TRUE(fwd.saved[0].shares_buffer(x));
  EXPECT_TRUE(fwd.saved[1].shares_buffer(fwd.outputs[0]));
  EXPECT_TRUE(testing::run_forward(*node, {x}, 1, false).saved.empty());
}

}  // namespace
}  // namespace nodeflow
