// Expand (ONNX Expand-13): bidirectional numpy broadcasting (a 1 in shape
// keeps the input's dimension, shorter shapes align on the right), every
// dtype, shape inference, refusals, and the gradient summed over the copies.
#include <gtest/gtest.h>

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

Tensor expand(const Tensor& x, const std::vector<std::int64_t>& shape) {
  return forward_output("Expand", {}, {x, int64_list(shape)});
}

TEST(Expand, BroadcastsBothWays) {
  // Conformance expand_tile_backward_f64: [3, 1] by [2, 1, 4] -> [2, 3, 4].
  const Tensor y = expand(pattern({3, 1}, 1, 100, 0, 1.0), {2, 1, 4});
  ASSERT_EQ(y.shape(), (Shape{2, 3, 4}));
  const std::vector<double> v = as_doubles(y);
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], static_cast<double>((i / 4) % 3)) << i;
  // A shorter shape aligns on the right; a 1 keeps the input's dimension.
  EXPECT_EQ(as_doubles(expand(pattern({2, 3}, 1, 100, 0, 1.0), {1})),
            (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(as_doubles(expand(pattern({1, 3}, 1, 100, 0, 1.0), {2, 1})),
            (std::vector<double>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(expand(pattern({}, 1, 100, -4, 1.0), {}).shape(), (Shape{}));
  EXPECT_EQ(expand(Tensor(DType::Float32, {1, 3}), {0, 1}).shape(), (Shape{0, 3}));
}

TEST(Expand, TakesEveryDtype) {
  for (DType t : kGraphDTypes) {
    const Tensor y = expand(pattern({2, 1}, 1, 100, 0, 1.0, t), {2, 2});
    EXPECT_EQ(y.dtype(), t);
    EXPECT_EQ(as_doubles(y.cast(DType::Float64)), (std::vector<double>{0, 0, 1, 1}));
  }
}

TEST(Expand, InfersAndRefusesShapes) {
  auto node = make_node("Expand", {});
  const Tensor shape = int64_list({4, 1, 3});
  const TensorInfo s{DType::Int64, {3}};
  const auto out = testing::infer(*node, {{DType::Int8, {kDynamicDim, 1}}, s}, {nullptr, &shape});
  EXPECT_EQ(out[0].dtype, DType::Int8);
  EXPECT_EQ(out[0].shape, (Shape{4, kDynamicDim, 3}));
  EXPECT_EQ(error_of<ShapeMismatch>([] {
              expand(Tensor(DType::Float32, {2, 3}), {4});
            }).find("input 1 (shape): "),
            0u);
  EXPECT_EQ(error_of<ShapeMismatch>([] {
              expand(Tensor(DType::Float32, {2, 3}), {-1, 3});
            }),
            "input 1 (shape): shape[0] = -1: dimensions must be >= 0");
  EXPECT_EQ(error_of<ShapeMismatch>([] {
              forward_output("Expand", {}, {Tensor(DType::Float32, {2}), Tensor(DType::Int64, {1, 1})});
            }),
            "input 1 (shape) has shape [1, 1]; Expand needs a 1-D int64 tensor");
}

TEST(Expand, GradientSumsOverTheCopies) {
  testing::expect_data_gradients("Expand",
                                 {{{3, 1}, {2, 1, 4}}, {{1, 3, 1}, {2, 3, 5}}, {{4}, {3, 1}},
                                  {{2, 1, 3}, {2, 4, 1}}, {{1}, {1, 1, 7}}, {{2, 3}, {2, 3}}},
                                 13);
}

}  // namespace
}  // namespace nodeflow
