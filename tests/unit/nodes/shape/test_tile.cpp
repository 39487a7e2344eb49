// Tile (ONNX Tile-13): repeats per axis (0 included), every dtype, shape
// inference, refusals, and the gradient summed over the copies.
#include <gtest/gtest.h>

#include <limits>

#include "core/errors.hpp"
#include "support/error_of.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"
#include "unit/nodes/shape/shape_test_lists.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::error_of;
using testing::forward_output;
using testing::int64_list;
using testing::make_node;
using testing::pattern;

Tensor tile(const Tensor& x, const std::vector<std::int64_t>& repeats) {
  return forward_output("Tile", {}, {x, int64_list(repeats)});
}

TEST(Tile, RepeatsEachAxis) {
  // numpy.tile(np.arange(6).reshape(2, 3), (2, 3)) (conformance expand_tile_backward_f64).
  const Tensor y = tile(pattern({2, 3}, 1, 100, 0, 1.0), {2, 3});
  ASSERT_EQ(y.shape(), (Shape{4, 9}));
  const std::vector<double> v = as_doubles(y);
  for (std::size_t r = 0; r < 4; ++r)
    for (std::size_t c = 0; c < 9; ++c) EXPECT_EQ(v[r * 9 + c], static_cast<double>((r % 2) * 3 + c % 3));
  EXPECT_EQ(tile(pattern({2, 3}, 1, 100, 0, 1.0), {0, 2}).shape(), (Shape{0, 6}));
  EXPECT_EQ(as_doubles(tile(pattern({3}, 1, 100, 0, 1.0), {1})), (std::vector<double>{0, 1, 2}));
}

TEST(Tile, TakesEveryDtype) {
  for (DType t : kGraphDTypes) {
    const Tensor y = tile(pattern({1, 2}, 1, 100, 0, 1.0, t), {2, 2});
    EXPECT_EQ(y.dtype(), t);
    EXPECT_EQ(as_doubles(y.cast(DType::Float64)), (std::vector<double>{0, 1, 0, 1, 0, 1, 0, 1}));
  }
}

TEST(Tile, InfersAndRefusesRepeats) {
  auto node = make_node("Tile", {});
  const Tensor repeats = int64_list({3, 2});
  const TensorInfo r{DType::Int64, {2}};
  const auto out = testing::infer(*node, {{DType::Float16, {kDynamicDim, 5}}, r}, {nullptr, &repeats});
  EXPECT_EQ(out[0].shape, (Shape{kDynamicDim, 10}));
  const Tensor x(DType::Float32, {2, 3});
  EXPECT_EQ(error_of<ShapeMismatch>([&] { tile(x, {2}); }),
            "input 1 (repeats) has 1 values for input of rank 2; Tile needs one per axis");
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              tile(x, {1, -1});
            }),
            "input 1 (repeats): repeats[1] = -1: repeats must be >= 0");
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              tile(x, {std::numeric_limits<std::int64_t>::max(), 1});
            }),
            "input 1 (repeats): repeats[0] = 9223372036854775807 times dimension 2 overflows int64");
}

TEST(Tile, GradientSumsOverTheCopies) {
  testing::expect_data_gradients(
      "Tile", {{{2, 3}, {2, 3}}, {{3}, {4}}, {{2, 1, 3}, {1, 3, 2}}, {{1, 2}, {3, 1}}, {{2, 2}, {1, 1}}}, 17);
}

}  // namespace
}  // namespace nodeflow
