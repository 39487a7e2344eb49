// AveragePool and GlobalAveragePool (docs/pooling.md, "Values", "Backward"), with
// hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "core/errors.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using ints = std::vector<std::int64_t>;

using testing::as_doubles;

void expect_near_all(const Tensor& t, const std::vector<double>& want, double tol = 1e-6) {
  const auto got = as_doubles(t);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

Tensor arange_f32(Shape shape, float first = 1) {
  Tensor t(DType::Float32, std::move(shape));
  auto v = t.values<float>();
  std::iota(v.begin(), v.end(), first);
  return t;
}

Tensor forward1(const std::string& op, const Attributes& attrs, const Tensor& x) {
  auto node = testing::make_node(op, attrs);
  return testing::run_forward(*node, {x}).outputs[0];
}

TEST(AveragePool, CeilModeLastWindowHoldsOneElement) {
  const Tensor y =
      forward1("AveragePool",
               {{"kernel_shape", ints{2}}, {"strides", ints{2}}, {"ceil_mode", std::int64_t{1}}},
               arange_f32({1, 1, 5}));
  EXPECT_EQ(y.shape(), (Shape{1, 1, 3}));
  expect_near_all(y, {1.5, 3.5, 5.0});
}

TEST(AveragePool, CeilModeIncludePadNeverCountsPositionsPastTheEndPad) {
  const Attributes attrs{{"kernel_shape", ints{3, 3}},
                         {"strides", ints{2, 2}},
                         {"pads", ints{1, 1, 1, 1}},
                         {"ceil_mode", std::int64_t{1}},
                         {"count_include_pad", std::int64_t{1}}};
  const Tensor y = forward1("AveragePool", attrs, arange_f32({1, 1, 4, 4}));
  EXPECT_EQ(y.shape(), (Shape{1, 1, 3, 3}));
  // Corner (0,0): 1+2+5+6 over 9 taps; edge (0,2): rows -1..1 x cols 3..4 (col 5
  // is past the end pad) = 6 taps holding 4 and 8; (2,2): one element, 4 taps.
  expect_near_all(y, {14.0 / 9, 30.0 / 9, 2.0, 57.0 / 9, 11.0, 6.0, 4.5, 7.5, 4.0}, 1e-5);
  EXPECT_NEAR(as_doubles(y)[0], 1.5556, 1e-4);
  EXPECT_NEAR(as_doubles(y)[1], 3.3333, 1e-4);
  EXPECT_NEAR(as_doubles(y)[3], 6.3333, 1e-4);
}

TEST(AveragePool, ExcludePadDividesByInputElementsOnly) {
  const Attributes attrs{{"kernel_shape", ints{3, 3}},
                         {"strides", ints{2, 2}},
                         {"pads", ints{1, 1, 1, 1}},
                         {"ceil_mode", std::int64_t{1}}};
  const Tensor y = forward1("AveragePool", attrs, arange_f32({1, 1, 4, 4}));
  expect_near_all(
      y, {14.0 / 4, 30.0 / 6, 12.0 / 2, 57.0 / 6, 11.0, 36.0 / 3, 27.0 / 2, 45.0 / 3, 16.0});
}

TEST(AveragePool, DilationCountsOnlySampledTaps) {
  // k 2, d 2, pads 1+1, s 1 on [1..5]: window o samples o-1 and o+1.
  Attributes attrs{{"kernel_shape", ints{2}}, {"dilations", ints{2}}, {"pads", ints{1, 1}}};
  expect_near_all(forward1("AveragePool", attrs, arange_f32({1, 1, 5})), {2, 2, 3, 4, 4});
  attrs["count_include_pad"] = std::int64_t{1};
  expect_near_all(forward1("AveragePool", attrs, arange_f32({1, 1, 5})), {1, 2, 3, 4, 2});
}

TEST(AveragePool, DilationWithCeilModeIncludePad) {
  // k 2, d 2, s 2, pads 0+1, ceil: 3 windows; the last samples 4 (value 5) and
  // 6, which lies past the end pad: divisor 1.
  const Attributes attrs{{"kernel_shape", ints{2}},      {"dilations", ints{2}},
                         {"strides", ints{2}},           {"pads", ints{0, 1}},
                         {"ceil_mode", std::int64_t{1}}, {"count_include_pad", std::int64_t{1}}};
  expect_near_all(forward1("AveragePool", attrs, arange_f32({1, 1, 5})), {2, 4, 5});
}

TEST(AveragePool, AutoPadPadsCountWithIncludePad) {
  Attributes attrs{{"kernel_shape", ints{2}},
                   {"auto_pad", std::string("SAME_LOWER")},
                   {"count_include_pad", std::int64_t{1}}};
  // SAME_LOWER: one pad at the begin.
  expect_near_all(forward1("AveragePool", attrs, arange_f32({1, 1, 4})), {0.5, 1.5, 2.5, 3.5});
  attrs["auto_pad"] = std::string("SAME_UPPER");
  expect_near_all(forward1("AveragePool", attrs, arange_f32({1, 1, 4})), {1.5, 2.5, 3.5, 2.0});
  attrs["count_include_pad"] = std::int64_t{0};
  expect_near_all(forward1("AveragePool", attrs, arange_f32({1, 1, 4})), {1.5, 2.5, 3.5, 4.0});
  attrs["auto_pad"] = std::string("VALID");
  expect_near_all(forward1("AveragePool", attrs, arange_f32({1, 1, 4})), {1.5, 2.5, 3.5});
}

TEST(AveragePool, AStrideFarBeyondTheInputLeavesOneWindowAtOnce) {
  // Stride 2^31 - 1 on 8x8 (arange from 0): one window per plane; the fast
  // kernels once sized a buffer by the stride and never finished.
  const Attributes attrs = {{"kernel_shape", ints{2, 2}}, {"strides", ints{2147483647, 2147483647}}};
  expect_near_all(forward1("AveragePool", attrs, arange_f32({2, 1, 8, 8}, 0)), {4.5, 68.5});
  expect_near_all(forward1("LpPool", attrs, arange_f32({2, 1, 8, 8}, 0)),
                  {std::sqrt(146.0), std::sqrt(64.0 * 64 + 65 * 65 + 72 * 72 + 73 * 73)}, 1e-4);
}

TEST(AveragePool, PlanesAreIndependent3D) {
  // 2 x 2 planes of 2x2x2, kernel 2x2x2: each plane's mean.
  const Tensor y =
      forward1("AveragePool", {{"kernel_shape", ints{2, 2, 2}}}, arange_f32({2, 2, 2, 2, 2}));
  EXPECT_EQ(y.shape(), (Shape{2, 2, 1, 1, 1}));
  expect_near_all(y, {4.5, 12.5, 20.5, 28.5});
}

TEST(AveragePool, AsymmetricPads2D) {
  // 3x3 [1..9], k 2x2, pads begin (1, 0) end (0, 1), exclude pad.
  const Tensor y =
      forward1("AveragePool", {{"kernel_shape", ints{2, 2}}, {"pads", ints{1, 0, 0, 1}}},
               arange_f32({1, 1, 3, 3}));
  EXPECT_EQ(y.shape(), (Shape{1, 1, 3, 3}));
  expect_near_all(y, {1.5, 2.5, 3, 3, 4, 4.5, 6, 7, 7.5});
}

TEST(AveragePool, HalfAndBFloat16AccumulateInFloat32) {
  // In float16, 2048 + 1 rounds back to 2048: summing in float16 would give
  // 2050 / 4 = 512.5 instead of 2052 / 4 = 513.
  const std::vector<half> h{half(2048.0f), half(1.0f), half(1.0f), half(2.0f)};
  const Tensor y =
      forward1("GlobalAveragePool", {}, Tensor::from<half>({1, 1, 4}, std::span<const half>(h)));
  EXPECT_EQ(y.dtype(), DType::Float16);
  EXPECT_EQ(static_cast<float>(y.values<half>()[0]), 513.0f);
  // bfloat16 spacing at 256 is 2: 256 + 1 rounds to 256.
  const std::vector<bfloat16> b{bfloat16(256.0f), bfloat16(1.0f), bfloat16(1.0f), bfloat16(2.0f)};
  const Tensor yb = forward1("AveragePool", {{"kernel_shape", ints{4}}},
                             Tensor::from<bfloat16>({1, 1, 4}, std::span<const bfloat16>(b)));
  EXPECT_EQ(static_cast<float>(yb.values<bfloat16>()[0]), 65.0f);
}

TEST(AveragePool, Float64) {
  const Tensor x = Tensor::from<double>({1, 1, 3}, {0.1, 0.2, 0.4});
  const Tensor y = forward1("AveragePool", {{"kernel_shape", ints{3}}}, x);
  EXPECT_EQ(y.dtype(), DType::Float64);
  EXPECT_DOUBLE_EQ(y.values<double>()[0], (0.1 + 0.2 + 0.4) / 3);
}

TEST(GlobalAveragePool, OneWindowOverAllSpatialAxes) {
  const Tensor y = forward1("GlobalAveragePool", {}, arange_f32({1, 2, 2, 3}));
  EXPECT_EQ(y.shape(), (Shape{1, 2, 1, 1}));
  expect_near_all(y, {3.5, 9.5});
  const Tensor y3 = forward1("GlobalAveragePool", {}, arange_f32({1, 1, 2, 2, 2}));
  EXPECT_EQ(y3.shape(), (Shape{1, 1, 1, 1, 1}));
  expect_near_all(y3, {4.5});
}

TEST(AveragePool, RefusesIntegerInputs) {
  auto node = testing::make_node("AveragePool", {{"kernel_shape", ints{2}}});
  const Tensor x = Tensor::from<std::int8_t>({1, 1, 2}, {1, 2});
  EXPECT_THROW(testing::run_forward(*node, {x}), UnsupportedDType);
}

TEST(AveragePoolBackward, AccumulatesIntoAPrefilledGradient) {
  auto node = testing::make_node(
      "AveragePool",
      {{"kernel_shape", ints{2}}, {"strides", ints{2}}, {"ceil_mode", std::int64_t{1}}});
  const Tensor x = arange_f32({1, 1, 5});
  const auto fwd = testing::run_forward(*node, {x});
  std::vector<Tensor> grads{Tensor::from<float>({1, 1, 5}, {10, 10, 10, 10, 10})};
  testing::run_backward(*node, {x}, fwd, {Tensor::from<float>({1, 1, 3}, {1, 2, 3})}, grads);
  // Windows {0,1}, {2,3} divide by 2; the last window {4} by 1.
  expect_near_all(grads[0], {10.5, 10.5, 11, 11, 13});
}

TEST(AveragePoolBackward, IncludePadDivisorsAndScale) {
  auto node = testing::make_node("AveragePool",
                                 {{"kernel_shape", ints{3, 3}},
                                  {"strides", ints{2, 2}},
                                  {"pads", ints{1, 1, 1, 1}},
                                  {"ceil_mode", std::int64_t{1}},
                                  {"count_include_pad", std::int64_t{1}}},
                                 true, 0.5);
  const Tensor x = arange_f32({1, 1, 4, 4});
  const auto fwd = testing::run_forward(*node, {x});
  Tensor dy(DType::Float32, {1, 1, 3, 3});
  for (float& v : dy.values<float>()) v = 1;
  std::vector<Tensor> grads{Tensor(DType::Float32, {1, 1, 4, 4})};
  testing::run_backward(*node, {x}, fwd, {dy}, grads);
  const auto g = as_doubles(grads[0]);
  // (0,0) lies only in window (0,0): 1/9. (3,3) lies in windows (1,1) 1/9,
  // (1,2) and (2,1) 1/6 each and (2,2) 1/4: 25/36. lda_coeff 0.5 halves both.
  EXPECT_NEAR(g[0], 0.5 / 9, 1e-7);
  EXPECT_NEAR(g[15], 0.5 * 25.0 / 36, 1e-7);
  // (1,1) lies in windows (0,0), (0,1), (1,0), (1,1): 1/9 + 1/9 + 1/9 + 1/9.
  EXPECT_NEAR(g[5], 0.5 * 4.0 / 9, 1e-7);
}

TEST(AveragePoolBackward, GlobalSpreadsEvenly) {
  auto node = testing::make_node("GlobalAveragePool", {});
  const Tensor x = arange_f32({1, 2, 2, 2});
  const auto fwd = testing::run_forward(*node, {x});
  std::vector<Tensor> grads{Tensor(DType::Float32, {1, 2, 2, 2})};
  testing::run_backward(*node, {x}, fwd, {Tensor::from<float>({1, 2, 1, 1}, {4, 8})}, grads);
  expect_near_all(grads[0], {1, 1, 1, 1, 2, 2, 2, 2});
}

TEST(AveragePoolBackward, SavesNothingAndSkipsAbsentGradients) {
  for (const char* op : {"AveragePool", "GlobalAveragePool"}) {
    auto node = testing::make_node(op, std::string(op) == "AveragePool"
                                           ? Attributes{{"kernel_shape", ints{2}}}
                                           : Attributes{});
    const Tensor x = arange_f32({1, 1, 4});
    const auto fwd = testing::run_forward(*node, {x}, 1, true);
    EXPECT_TRUE(fwd.saved.empty()) << op;
    // No gradient wanted, or none arriving: nothing happens.
    Tensor ones(DType::Float32, fwd.outputs[0].shape());
    for (float& v : ones.values<float>()) v = 1;
    std::vector<Tensor> none{Tensor()};
    testing::run_backward(*node, {x}, fwd, {ones}, none);
    EXPECT_TRUE(none[0].empty());
    std::vector<Tensor> kept{Tensor::from<float>({1, 1, 4}, {7, 7, 7, 7})};
    testing::run_backward(*node, {x}, fwd, {Tensor()}, kept);
    expect_near_all(kept[0], {7, 7, 7, 7});
  }
}

}  // namespace
}  // namespace nodeflow
