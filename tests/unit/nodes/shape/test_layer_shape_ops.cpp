// Flatten (ONNX Flatten-21) and Reshape (Reshape-21): output shapes (0 and -1
// rules, allowzero, negative axes), shape inference with dynamic dimensions
// and the constant shape, errors, and the gradient pass-through.
#include <gtest/gtest.h>


#include "core/errors.hpp"
#include "support/error_of.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::error_of;
using testing::i64;
using testing::make_node;
using testing::pattern;
using testing::run_forward;

Shape flatten(std::int64_t axis, const Shape& in) {
  return run_forward(*make_node("Flatten", {{"axis", axis}}), {Tensor(DType::Float32, in)}, 1, false).outputs[0].shape();
}

TEST(LayerFlatten, SplitsAtTheAxis) {
  EXPECT_EQ(flatten(1, {2, 3, 4, 5}), (Shape{2, 60}));
  EXPECT_EQ(flatten(0, {2, 3, 4, 5}), (Shape{1, 120}));
  EXPECT_EQ(flatten(4, {2, 3, 4, 5}), (Shape{120, 1}));
  EXPECT_EQ(flatten(-1, {2, 3, 4, 5}), (Shape{24, 5}));
  EXPECT_EQ(flatten(-4, {2, 3, 4, 5}), (Shape{1, 120}));
  EXPECT_EQ(flatten(0, {}), (Shape{1, 1}));
  // Data are not moved: the output shares the input's buffer.
  const Tensor x = pattern({2, 3}, 1, 100, 0, 1.0);
  const Tensor y = run_forward(*make_node("Flatten", {{"axis", std::int64_t{0}}}), {x}, 1, false).outputs[0];
  EXPECT_TRUE(y.shares_buffer(x));
  EXPECT_EQ(testing::as_doubles(y), testing::as_doubles(x));
  // Any dtype: int64 labels flatten too.
  EXPECT_EQ(run_forward(*make_node("Flatten", {}), {i64({2, 2}, {1, 2, 3, 4})}, 1, false).outputs[0].shape(),
            (Shape{2, 2}));
}

TEST(LayerFlatten, InfersDynamicDimensionsAndRefusesBadAxes) {
  auto node = make_node("Flatten", {});
  EXPECT_EQ(testing::infer(*node, {{DType::Float32, {kDynamicDim, 3, 4}}})[0].shape, (Shape{kDynamicDim, 12}));
  EXPECT_EQ(testing::infer(*node, {{DType::Float32, {2, kDynamicDim, 4}}})[0].shape, (Shape{2, kDynamicDim}));
  EXPECT_EQ(error_of<InvalidAttribute>([] { flatten(5, {2, 3, 4, 5}); }),
            "attributes.axis: expected an integer in [-4, 4] for input rank 4, got 5");
  EXPECT_EQ(error_of<InvalidAttribute>([] { flatten(-5, {2, 3, 4, 5}); }),
            "attributes.axis: expected an integer in [-4, 4] for input rank 4, got -5");
}

Shape reshape(const Shape& in, std::initializer_list<std::int64_t> spec, std::int64_t allowzero = 0) {
  auto node = make_node("Reshape", {{"allowzero", allowzero}});
  const Tensor shape = i64({static_cast<std::int64_t>(spec.size())}, spec);
  return run_forward(*node, {Tensor(DType::Float32, in), shape}, 1, false).outputs[0].shape();
}

TEST(LayerReshape, FollowsTheZeroAndMinusOneRules) {
  EXPECT_EQ(reshape({2, 3, 4}, {4, 6}), (Shape{4, 6}));
  EXPECT_EQ(reshape({2, 3, 4}, {-1}), (Shape{24}));
  EXPECT_EQ(reshape({2, 3, 4}, {0, -1}), (Shape{2, 12}));
  EXPECT_EQ(reshape({2, 3, 4}, {-1, 0, 2}), (Shape{4, 3, 2}));
  EXPECT_EQ(reshape({2, 3, 4}, {0, 0, 0}), (Shape{2, 3, 4}));
  EXPECT_EQ(reshape({1}, {}), (Shape{}));
  // allowzero: 0 is a zero-sized dimension; without it, 0 copies the input's dimension.
  EXPECT_EQ(reshape({0, 3}, {3, 0}, 1), (Shape{3, 0}));
  EXPECT_EQ(reshape({0, 3}, {0, 3}, 0), (Shape{0, 3}));
  // Data are not moved: the output shares the input's buffer.
  const Tensor x = pattern({2, 3}, 1, 100, 0, 1.0);
  const Tensor y = run_forward(*make_node("Reshape", {}), {x, i64({1}, {-1})}, 1, false).outputs[0];
  EXPECT_TRUE(y.shares_buffer(x));
  EXPECT_EQ(y.shape(), (Shape{6}));
}

TEST(LayerReshape, RefusesImpossibleShapes) {
  EXPECT_EQ(error_of<ShapeMismatch>([] { reshape({2, 3, 4}, {-1, -1}); }),
            "input 1 (shape): shape[1] = -1: at most one -1 is allowed (shape[0] is -1 too)");
  EXPECT_EQ(error_of<ShapeMismatch>([] { reshape({2, 3, 4}, {5, -1}); }),
            "input 1 (shape): cannot infer the -1 of [5, -1] for input [2, 3, 4]");
  EXPECT_EQ(error_of<ShapeMismatch>([] { reshape({2, 3, 4}, {5, 5}); }),
            "cannot reshape input [2, 3, 4] to [5, 5] (different element counts)");
  EXPECT_EQ(error_of<ShapeMismatch>([] { reshape({0, 3}, {3, 0}); }),
            "cannot reshape input [0, 3] to [3, 3] (different element counts)");
  EXPECT_EQ(error_of<ShapeMismatch>([] { reshape({6}, {2, 0}); }),
            "input 1 (shape): shape[1] = 0 copies input axis 1, but the input [6] has rank 1");
  EXPECT_EQ(error_of<ShapeMismatch>([] { reshape({2, 3}, {-2, 3}); }),
            "input 1 (shape): shape[0] = -2: dimensions must be >= -1");
  EXPECT_EQ(error_of<ShapeMismatch>([] { reshape({0, 3}, {0, -1}, 1); }),
            "input 1 (shape): with allowzero = 1 the shape cannot hold both 0 and -1");
  EXPECT_EQ(error_of<UnsupportedDType>([] {
              run_forward(*make_node("Reshape", {}), {Tensor(DType::Float32, {2}), Tensor(DType::Float32, {1})}, 1,
                          false);
            }),
            "Reshape needs dtype int64 for input 1 (shape), got float32");
}

TEST(LayerReshape, InfersFromTheConstantShape) {
  auto node = make_node("Reshape", {});
  // A constant shape [0, -1] after a dynamic batch: the copied dimension cancels out.
  const Tensor flat = i64({2}, {0, -1});
  auto out = testing::infer(*node, {{DType::Float32, {kDynamicDim, 3, 4}}, {DType::Int64, {2}}}, {nullptr, &flat});
  EXPECT_EQ(out[0].shape, (Shape{kDynamicDim, 12}));
  // -1 next to a dynamic dimension that is not copied: unknown.
  const Tensor last = i64({2}, {-1, 4});
  out = testing::infer(*node, {{DType::Float32, {kDynamicDim, 3, 4}}, {DType::Int64, {2}}}, {nullptr, &last});
  EXPECT_EQ(out[0].shape, (Shape{kDynamicDim, 4}));
  // The graph makes the shape a constant (the schema says so); a lone node
  // without one refuses.
  EXPECT_EQ(error_of<InvalidGraph>([&] { testing::infer(*node, {{DType::Float64, {2, 3}}, {DType::Int64, {3}}}); }),
            "input 1 (shape) must be a non-trainable initializer");
  const Tensor matrix = i64({1, 2}, {2, 3});
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              testing::infer(*node, {{DType::Float32, {2, 3}}, {DType::Int64, {1, 2}}}, {nullptr, &matrix});
            }),
            "input 1 (shape) has shape [1, 2]; Reshape needs a 1-D int64 tensor");
  const Tensor bad = i64({2}, {5, 5});
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              testing::infer(*node, {{DType::Float32, {2, 3}}, {DType::Int64, {2}}}, {nullptr, &bad});
            }),
            "cannot reshape input [2, 3] to [5, 5] (different element counts)");
}

TEST(LayerShapeOps, GradientIsTheOutputGradientReshaped) {
  const Tensor x = pattern({2, 3, 4}, 7, 13, 6, 3.0);
  for (double lda : {1.0, 0.5}) {
    auto flat = make_node("Flatten", {{"axis", std::int64_t{2}}}, true, lda);
    testing::GradCheckResult r = testing::check_gradient(*flat, {x});
    EXPECT_TRUE(r.ok) << r.failures;
    auto re = make_node("Reshape", {}, true, lda);
    r = testing::check_gradient(*re, {x, i64({3}, {4, -1, 2})});
    EXPECT_TRUE(r.ok) << r.failures;
  }
}

}  // namespace
}  // namespace nodeflow
