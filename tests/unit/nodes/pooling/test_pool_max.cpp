// MaxPool and GlobalMaxPool (docs/pooling.md, "Values", "Backward"): NaN, ties,
// Indices layout, padding, integer dtypes, the saved-state contract.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>

#include "core/errors.hpp"
#include "support/gradcheck.hpp"
#include "support/graph_parts.hpp"

namespace nodeflow {
namespace {

using ints = std::vector<std::int64_t>;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
using testing::values_of;

std::vector<std::int64_t> indices_of(const testing::ForwardResult& r) {
  const auto v = r.outputs.at(1).values<std::int64_t>();
  return {v.begin(), v.end()};
}

testing::ForwardResult max_pool(const Attributes& attrs, const Tensor& x, bool training = false) {
  auto node = testing::make_node("MaxPool", attrs);
  return testing::run_forward(*node, {x}, 2, training);
}

TEST(MaxPool, NaNPropagatesAndTheFirstNaNWins) {
  const Tensor x = Tensor::from<float>({1, 1, 5}, {1, kNaN, 3, kNaN, 2});
  const auto r = max_pool({{"kernel_shape", ints{2}}}, x);
  const auto y = values_of<float>(r.outputs[0]);
  ASSERT_EQ(y.size(), 4u);
  for (float v : y) EXPECT_TRUE(std::isnan(v));
  // Windows {0,1}, {1,2}, {2,3}, {3,4}: the NaN wins even after a larger number.
  EXPECT_EQ(indices_of(r), (ints{1, 1, 3, 3}));
  const auto whole = max_pool({{"kernel_shape", ints{5}}}, x);
  EXPECT_TRUE(std::isnan(values_of<float>(whole.outputs[0])[0]));
  EXPECT_EQ(indices_of(whole), (ints{1}));
}

TEST(MaxPool, TiesGoToTheFirstElementInRowMajorOrder) {
  const auto r =
      max_pool({{"kernel_shape", ints{4}}}, Tensor::from<float>({1, 1, 4}, {2, 5, 5, 1}));
  EXPECT_EQ(values_of<float>(r.outputs[0]), (std::vector<float>{5}));
  EXPECT_EQ(indices_of(r), (ints{1}));
  // Constant 3x3, k 2x2: each window's top-left element.
  Tensor flat(DType::Float32, {1, 1, 3, 3});
  for (float& v : flat.values<float>()) v = 7;
  EXPECT_EQ(indices_of(max_pool({{"kernel_shape", ints{2, 2}}}, flat)), (ints{0, 1, 3, 4}));
}

TEST(MaxPool, StorageOrderMakesTheSpatialPartColumnMajor) {
  // N 1, C 2, H 2, W 3. Plane 0's max at (0, 1); plane 1's at (1, 0).
  const Tensor x = Tensor::from<float>({1, 2, 2, 3}, {0, 9, 1, 2, 3, 4,  //
                                                      0, 1, 2, 8, 3, 4});
  const Attributes row{{"kernel_shape", ints{2, 3}}};
  EXPECT_EQ(indices_of(max_pool(row, x)), (ints{1, 6 + 3}));
  Attributes column = row;
  column["storage_order"] = std::int64_t{1};
  // Column-major spatial index w * H + h; the plane offset stays 6.
  EXPECT_EQ(indices_of(max_pool(column, x)), (ints{1 * 2 + 0, 6 + 0 * 2 + 1}));
  // 3-D: D 2, H 2, W 2, max at (d 1, h 0, w 1): row-major 5, column-major
  // w*H*D + h*D + d = 4 + 0 + 1.
  Tensor x3(DType::Float32, {1, 1, 2, 2, 2});
  x3.values<float>()[5] = 1;
  Attributes column3{{"kernel_shape", ints{2, 2, 2}}, {"storage_order", std::int64_t{1}}};
  EXPECT_EQ(indices_of(max_pool(column3, x3)), (ints{5}));
  x3.values<float>()[5] = 0;
  x3.values<float>()[3] = 1;  // (d 0, h 1, w 1): column-major 4 + 2 + 0 = 6
  EXPECT_EQ(indices_of(max_pool(column3, x3)), (ints{6}));
}

TEST(MaxPool, IndicesIncludeBatchAndChannelOffsets) {
  // N 2, C 2, W 2, k 2: one window per plane; the larger element's flat index.
  const Tensor x = Tensor::from<float>({2, 2, 2}, {1, 2, 4, 3, 5, 6, 8, 7});
  const auto r = max_pool({{"kernel_shape", ints{2}}}, x);
  EXPECT_EQ(values_of<float>(r.outputs[0]), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(indices_of(r), (ints{1, 2, 5, 6}));
}

TEST(MaxPool, PaddingNeverWins) {
  const Tensor x = Tensor::from<float>({1, 1, 3}, {-3, -1, -2});
  const auto r = max_pool({{"kernel_shape", ints{3}}, {"pads", ints{1, 1}}}, x);
  EXPECT_EQ(values_of<float>(r.outputs[0]), (std::vector<float>{-1, -1, -1}));
  EXPECT_EQ(indices_of(r), (ints{1, 1, 1}));
  // 2-D, all negative, pads 1 on every side: the corner windows hold 4 inputs.
  const Tensor x2 = Tensor::from<float>({1, 1, 2, 2}, {-4, -3, -2, -1});
  const auto r2 = max_pool({{"kernel_shape", ints{2, 2}}, {"pads", ints{1, 1, 1, 1}}}, x2);
  EXPECT_EQ(values_of<float>(r2.outputs[0]),
            (std::vector<float>{-4, -3, -3, -2, -1, -1, -2, -1, -1}));
  EXPECT_EQ(indices_of(r2), (ints{0, 1, 1, 2, 3, 3, 2, 3, 3}));
}

TEST(MaxPool, Int8MinimumSurvivesPads) {
  const Tensor x = Tensor::from<std::int8_t>({1, 1, 2}, {-128, -128});
  const auto r = max_pool({{"kernel_shape", ints{2}}, {"pads", ints{1, 1}}}, x);
  EXPECT_EQ(r.outputs[0].dtype(), DType::Int8);
  EXPECT_EQ(values_of<std::int8_t>(r.outputs[0]), (std::vector<std::int8_t>{-128, -128, -128}));
  EXPECT_EQ(indices_of(r), (ints{0, 0, 1}));
  const Tensor u = Tensor::from<std::uint8_t>({1, 1, 3}, {0, 255, 7});
  const auto ru = max_pool({{"kernel_shape", ints{2}}, {"pads", ints{1, 1}}}, u);
  EXPECT_EQ(values_of<std::uint8_t>(ru.outputs[0]), (std::vector<std::uint8_t>{0, 255, 255, 7}));
  EXPECT_EQ(indices_of(ru), (ints{0, 1, 1, 2}));
}

TEST(MaxPool, AStrideFarBeyondTheInputLeavesOneWindowAtOnce) {
  // Found by a user: the fast kernels' stride-phase buffers grew with the
  // stride, so 2^31 - 1 took gigabytes and never finished.
  std::vector<float> v(128);
  std::iota(v.begin(), v.end(), 0.0f);
  const Tensor x = Tensor::from<float>({2, 1, 8, 8}, v);
  const auto r = max_pool({{"kernel_shape", ints{2, 2}}, {"strides", ints{2147483647, 2147483647}}},
                          x, true);
  EXPECT_EQ(r.outputs[0].shape(), (Shape{2, 1, 1, 1}));
  EXPECT_EQ(values_of<float>(r.outputs[0]), (std::vector<float>{9, 73}));
  EXPECT_EQ(indices_of(r), (std::vector<std::int64_t>{9, 73}));
}

TEST(MaxPool, DilationReadsSpacedTaps) {
  const Tensor x = Tensor::from<float>({1, 1, 5}, {9, 1, 2, 8, 3});
  const auto r = max_pool({{"kernel_shape", ints{2}}, {"dilations", ints{3}}}, x);
  EXPECT_EQ(values_of<float>(r.outputs[0]), (std::vector<float>{9, 3}));
  EXPECT_EQ(indices_of(r), (ints{0, 4}));
}

TEST(MaxPool, CeilModeAndSameUpper) {
  const Tensor x = Tensor::from<float>({1, 1, 5}, {1, 5, 2, 4, 3});
  const auto ceil = max_pool(
      {{"kernel_shape", ints{2}}, {"strides", ints{2}}, {"ceil_mode", std::int64_t{1}}}, x);
  EXPECT_EQ(values_of<float>(ceil.outputs[0]), (std::vector<float>{5, 4, 3}));
  // SAME_UPPER k 3 s 2: out 3, P = 2 -> 1 + 1.
  const auto same = max_pool(
      {{"kernel_shape", ints{3}}, {"strides", ints{2}}, {"auto_pad", std::string("SAME_UPPER")}},
      x);
  EXPECT_EQ(values_of<float>(same.outputs[0]), (std::vector<float>{5, 5, 4}));
  EXPECT_EQ(indices_of(same), (ints{1, 1, 3}));
}

TEST(MaxPool, FourSpatialAxes) {
  Tensor x(DType::Float32, {1, 1, 2, 2, 2, 2});
  auto v = x.values<float>();
  std::iota(v.begin(), v.end(), 0.0f);
  v[6] = 100;
  const auto r = max_pool({{"kernel_shape", ints{2, 2, 2, 2}}}, x);
  EXPECT_EQ(r.outputs[0].shape(), (Shape{1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(values_of<float>(r.outputs[0]), (std::vector<float>{100}));
  EXPECT_EQ(indices_of(r), (ints{6}));
}

TEST(MaxPool, HalfAndBFloat16AreExact) {
  const std::vector<half> h{half(0.1f), half(-2.0f), half(0.3f)};
  const auto r = max_pool({{"kernel_shape", ints{2}}},
                          Tensor::from<half>({1, 1, 3}, std::span<const half>(h)));
  EXPECT_EQ(values_of<half>(r.outputs[0]), (std::vector<half>{h[0], h[2]}));
  const std::vector<bfloat16> b{bfloat16(0.1f), bfloat16(0.3f), bfloat16(-2.0f)};
  const auto rb = max_pool({{"kernel_shape", ints{2}}},
                           Tensor::from<bfloat16>({1, 1, 3}, std::span<const bfloat16>(b)));
  EXPECT_EQ(values_of<bfloat16>(rb.outputs[0]), (std::vector<bfloat16>{b[1], b[1]}));
}

TEST(MaxPool, OneRequestedOutputComputesNoIndices) {
  auto node = testing::make_node("MaxPool", {{"kernel_shape", ints{2}}});
  const auto r = testing::run_forward(*node, {Tensor::from<float>({1, 1, 3}, {1, 3, 2})}, 1, false);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(values_of<float>(r.outputs[0]), (std::vector<float>{3, 3}));
  EXPECT_TRUE(r.saved.empty());
}

TEST(MaxPool, TrainingSavesOnlyTheArgmax) {
  auto node =
      testing::make_node("MaxPool", {{"kernel_shape", ints{2, 2}}, {"strides", ints{2, 2}}});
  Tensor x(DType::Float32, {2, 3, 4, 6});
  auto v = x.values<float>();
  std::iota(v.begin(), v.end(), 0.0f);
  for (std::size_t outputs : {1u, 2u}) {
    const auto r = testing::run_forward(*node, {x}, outputs, true);
    ASSERT_EQ(r.saved.size(), 1u);
    const Tensor& saved = r.saved[0];
    EXPECT_EQ(saved.shape(), (Shape{2, 3, 2, 3}));
    EXPECT_FALSE(saved.shares_buffer(x));
    EXPECT_FALSE(saved.shares_buffer(r.outputs[0]));
    // Row-major argmax: the bottom-right element of each 2x2 window. Without
    // Indices, as int32 offsets within each 4x6 plane; with Indices, the
    // int64 flat indices those are made from.
    if (outputs == 1) {
      ASSERT_EQ(saved.dtype(), DType::Int32);
      EXPECT_EQ(values_of<std::int32_t>(saved), (std::vector<std::int32_t>{
                                                    7, 9, 11, 19, 21, 23, 7, 9, 11, 19, 21, 23,
                                                    7, 9, 11, 19, 21, 23, 7, 9, 11, 19, 21, 23,
                                                    7, 9, 11, 19, 21, 23, 7, 9, 11, 19, 21, 23}));
    } else {
      ASSERT_EQ(saved.dtype(), DType::Int64);
      EXPECT_EQ(saved.values<std::int64_t>()[0], 7);
      EXPECT_EQ(saved.values<std::int64_t>()[3], 19);
      EXPECT_EQ(saved.values<std::int64_t>()[6], 24 + 7);
      EXPECT_EQ(saved.values<std::int64_t>()[35], 5 * 24 + 23);
    }
  }
  // Inference keeps nothing; an integer MaxPool keeps nothing either (no backward).
  EXPECT_TRUE(testing::run_forward(*node, {x}, 2, false).saved.empty());
  EXPECT_TRUE(
      testing::run_forward(*node, {Tensor(DType::Int8, {2, 3, 4, 6})}, 2, true).saved.empty());
}

TEST(MaxPoolBackward, GradientGoesToTheArgmaxAndAccumulates) {
  auto node = testing::make_node("MaxPool", {{"kernel_shape", ints{2}}});
  const Tensor x = Tensor::from<float>({1, 1, 4}, {1, 3, 2, 2});
  const auto fwd = testing::run_forward(*node, {x}, 2, true);
  std::vector<Tensor> grads{Tensor::from<float>({1, 1, 4}, {5, 5, 5, 5})};
  // Windows {0,1}, {1,2} -> element 1 twice; {2,3} tie -> element 2.
  testing::run_backward(*node, {x}, fwd, {Tensor::from<float>({1, 1, 3}, {1, 2, 4}), Tensor()},
                        grads);
  EXPECT_EQ(values_of<float>(grads[0]), (std::vector<float>{5, 8, 9, 5}));
}

TEST(MaxPoolBackward, TiesAndNaNSendTheGradientToTheIndexedElement) {
  auto node = testing::make_node("MaxPool", {{"kernel_shape", ints{3}}}, true, 0.5);
  const Tensor x = Tensor::from<float>({1, 1, 3}, {4, kNaN, kNaN});
  const auto fwd = testing::run_forward(*node, {x}, 2, true);
  EXPECT_EQ(indices_of(fwd), (ints{1}));
  std::vector<Tensor> grads{Tensor(DType::Float32, {1, 1, 3})};
  testing::run_backward(*node, {x}, fwd, {Tensor::from<float>({1, 1, 1}, {3}), Tensor()}, grads);
  EXPECT_EQ(values_of<float>(grads[0]), (std::vector<float>{0, 1.5f, 0}));
}

TEST(MaxPoolBackward, StorageOrderDoesNotChangeTheGradient) {
  auto node = testing::make_node(
      "MaxPool", {{"kernel_shape", ints{2, 2}}, {"storage_order", std::int64_t{1}}});
  const Tensor x = Tensor::from<double>({1, 1, 2, 3}, {0, 1, 9, 2, 3, 4});
  const auto fwd = testing::run_forward(*node, {x}, 2, true);
  // Column-major w * H + h: (1,1) -> 3 and (0,2) -> 4.
  EXPECT_EQ(indices_of(fwd), (ints{3, 4}));
  std::vector<Tensor> grads{Tensor(DType::Float64, {1, 1, 2, 3})};
  testing::run_backward(*node, {x}, fwd, {Tensor::from<double>({1, 1, 1, 2}, {1, 2}), Tensor()},
                        grads);
  EXPECT_EQ(values_of<double>(grads[0]), (std::vector<double>{0, 0, 2, 0, 1, 0}));
}

TEST(MaxPoolBackward, SameGradientFromEitherFormOfTheSavedArgmax) {
  // Without Indices the state is int32 offsets within each plane; with it,
  // int64 flat indices. Several planes, overlapping windows and padding.
  auto node = testing::make_node("MaxPool", {{"kernel_shape", ints{3, 3}},
                                             {"strides", ints{2, 2}},
                                             {"pads", ints{1, 1, 1, 1}}});
  Tensor x(DType::Float32, {2, 3, 7, 9});
  auto xv = x.values<float>();
  for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>((i * 37) % 101) - 50.0f;
  Tensor dy(DType::Float32, {2, 3, 4, 5});
  auto dv = dy.values<float>();
  for (std::size_t i = 0; i < dv.size(); ++i) dv[i] = static_cast<float>(i % 7) + 0.25f;
  std::vector<std::vector<float>> results;
  for (std::size_t outputs : {1u, 2u}) {
    const auto fwd = testing::run_forward(*node, {x}, outputs, true);
    ASSERT_EQ(fwd.saved.size(), 1u);
    EXPECT_EQ(fwd.saved[0].dtype(), outputs == 1 ? DType::Int32 : DType::Int64);
    std::vector<Tensor> grads{Tensor(DType::Float32, {2, 3, 7, 9})};
    std::vector<Tensor> dys{dy};
    if (outputs == 2) dys.push_back(Tensor());
    testing::run_backward(*node, {x}, fwd, dys, grads);
    results.push_back(values_of<float>(grads[0]));
  }
  EXPECT_EQ(results[0], results[1]);
  // Each output's gradient lands once: the total is dY's.
  double total = 0;
  for (float v : results[0]) total += v;
  double expected = 0;
  for (float v : dv) expected += v;
  EXPECT_DOUBLE_EQ(total, expected);
}

TEST(MaxPoolBackward, RefusesSavedStateOfAnotherDtypeOrShape) {
  auto node = testing::make_node("MaxPool", {{"kernel_shape", ints{2}}});
  const Tensor x = Tensor::from<float>({1, 2, 2}, {1, 2, 4, 3});
  auto fwd = testing::run_forward(*node, {x}, 1, true);
  std::vector<Tensor> grads{Tensor(DType::Float32, {1, 2, 2})};
  const std::vector<Tensor> dys{Tensor(DType::Float32, {1, 2, 1})};
  for (const Tensor& wrong : {Tensor(DType::Float32, {1, 2, 1}), Tensor(DType::Int32, {1, 1, 1})}) {
    fwd.saved = {wrong};
    EXPECT_THROW(testing::run_backward(*node, {x}, fwd, dys, grads), RunError);
  }
}

TEST(MaxPoolBackward, RefusesIntegersAndMissingState) {
  auto node = testing::make_node("MaxPool", {{"kernel_shape", ints{2}}});
  const Tensor x8 = Tensor::from<std::int8_t>({1, 1, 2}, {1, 2});
  const auto fwd8 = testing::run_forward(*node, {x8}, 1, true);
  std::vector<Tensor> grads8{Tensor(DType::Int8, {1, 1, 2})};
  EXPECT_THROW(testing::run_backward(*node, {x8}, fwd8, {Tensor(DType::Int8, {1, 1, 1})}, grads8),
               UnsupportedDType);
  const Tensor x = Tensor::from<float>({1, 1, 2}, {1, 2});
  const auto inference = testing::run_forward(*node, {x}, 1, false);
  std::vector<Tensor> grads{Tensor(DType::Float32, {1, 1, 2})};
  EXPECT_THROW(
      testing::run_backward(*node, {x}, inference, {Tensor(DType::Float32, {1, 1, 1})}, grads),
      RunError);
}

TEST(GlobalMaxPool, OneWindowPerPlaneAndItsGradient) {
  auto node = testing::make_node("GlobalMaxPool", {});
  const Tensor x = Tensor::from<float>({1, 2, 2, 2}, {1, 4, 4, 2, -1, -3, -2, -5});
  const auto fwd = testing::run_forward(*node, {x}, 1, true);
  EXPECT_EQ(fwd.outputs[0].shape(), (Shape{1, 2, 1, 1}));
  EXPECT_EQ(values_of<float>(fwd.outputs[0]), (std::vector<float>{4, -1}));
  ASSERT_EQ(fwd.saved.size(), 1u);
  // Offsets within each plane: the first of the tied 4s, and plane 1's 2.
  EXPECT_EQ(values_of<std::int32_t>(fwd.saved[0]), (std::vector<std::int32_t>{1, 0}));
  std::vector<Tensor> grads{Tensor::from<float>({1, 2, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1})};
  testing::run_backward(*node, {x}, fwd, {Tensor::from<float>({1, 2, 1, 1}, {2, 3})}, grads);
  EXPECT_EQ(values_of<float>(grads[0]), (std::vector<float>{1, 3, 1, 1, 4, 1, 1, 1}));
  const Tensor u = Tensor::from<std::int8_t>({1, 1, 3}, {-7, 12, -128});
  EXPECT_EQ(values_of<std::int8_t>(testing::run_forward(*node, {u}).outputs[0]),
            (std::vector<std::int8_t>{12}));
}

}  // namespace
}  // namespace nodeflow
