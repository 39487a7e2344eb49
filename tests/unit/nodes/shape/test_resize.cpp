// Resize-19 as a node: values of nearest and (bi)linear against hand-computed
// ones, integer dtypes, tf_crop_and_resize's extrapolation, shape inference
// with constant inputs and dynamic dimensions, load-time refusals, and the
// finite-difference gradients over a sweep of modes, axes and scales (the +=
// into pre-filled buffers included).
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
using testing::expect_near;
using testing::f64;
using testing::make_node;
using testing::random_uniform;
using testing::run_forward;

Tensor scales_of(std::vector<float> v) {
  const auto n = static_cast<std::int64_t>(v.size());
  return Tensor::from<float>({n}, std::span<const float>(v));
}
Tensor sizes_of(std::vector<std::int64_t> v) {
  const auto n = static_cast<std::int64_t>(v.size());
  return Tensor::from<std::int64_t>({n}, std::span<const std::int64_t>(v));
}

TEST(Resize, BilinearAlignCornersAndNearestValues) {
  // [[0, 1], [2, 3]] -> 3 x 3 with align_corners: the midpoints are averages.
  const Tensor x = f64({1, 1, 2, 2}, {0, 1, 2, 3});
  auto linear = make_node("Resize", {{"mode", std::string("linear")},
                                     {"coordinate_transformation_mode", std::string("align_corners")}});
  expect_near(as_doubles(run_forward(*linear, {x, Tensor{}, Tensor{}, sizes_of({1, 1, 3, 3})}).outputs[0]),
              {0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3}, 1e-15);
  auto nearest = make_node("Resize", {{"coordinate_transformation_mode", std::string("asymmetric")}});
  expect_near(as_doubles(run_forward(*nearest, {x, Tensor{}, scales_of({1, 1, 1, 2})}).outputs[0]),
              {0, 0, 1, 1, 2, 2, 3, 3}, 0);
}

TEST(Resize, IntegerDtypes) {
  const Tensor x = Tensor::from<std::uint8_t>({1, 2}, {10, 255});
  auto nearest = make_node("Resize", {{"coordinate_transformation_mode", std::string("asymmetric")}});
  const Tensor y = run_forward(*nearest, {x, Tensor{}, scales_of({1, 2})}).outputs[0];
  EXPECT_EQ(y.dtype(), DType::UInt8);
  EXPECT_EQ(as_doubles(y.cast(DType::Float64)), (std::vector<double>{10, 10, 255, 255}));
  // Linear rounds to nearest: 10 + (255 - 10) / 3 = 91.67 -> 92.
  auto linear = make_node("Resize", {{"mode", std::string("linear")},
                                     {"coordinate_transformation_mode", std::string("align_corners")}});
  const Tensor z = run_forward(*linear, {x, Tensor{}, Tensor{}, sizes_of({1, 4})}).outputs[0];
  EXPECT_EQ(as_doubles(z.cast(DType::Float64)), (std::vector<double>{10, 92, 173, 255}));
}

TEST(Resize, TfCropAndResizeExtrapolates) {
  const Tensor x = f64({1, 5}, {0, 1, 2, 3, 4});
  const Tensor roi = scales_of({0.5, 1.25});  // float32: the gradient check leaves it alone
  auto node = make_node("Resize", {{"mode", std::string("linear")},
                                   {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                                   {"extrapolation_value", -7.0},
                                   {"axes", std::vector<std::int64_t>{1}}});
  expect_near(as_doubles(run_forward(*node, {x, roi, Tensor{}, sizes_of({4})}).outputs[0]), {2, 3, 4, -7}, 1e-15);
  std::mt19937_64 rng(1);
  const auto r = check_gradient(*node, {random_uniform({2, 5}, rng), roi, Tensor{}, sizes_of({4})});
  EXPECT_TRUE(r.ok) << r.failures;
}

// Node::infer with X's info and the constant inputs roi, scales, sizes (nullptr: absent).
TensorInfo infer_resize(const Node& node, const TensorInfo& x, const Tensor* roi, const Tensor* scales,
                        const Tensor* sizes) {
  InferContext ctx;
  ctx.inputs.push_back(&x);
  ctx.constants.push_back(nullptr);
  std::vector<TensorInfo> infos;
  infos.reserve(3);
  for (const Tensor* t : {roi, scales, sizes}) {
    infos.push_back(t ? TensorInfo{t->dtype(), t->shape()} : TensorInfo{});
    ctx.inputs.push_back(t ? &infos.back() : nullptr);
    ctx.constants.push_back(t);
  }
  return node.infer(ctx).at(0);
}

TEST(Resize, ShapeInference) {
  auto node = make_node("Resize", {{"axes", std::vector<std::int64_t>{-1, 2}}});
  const Tensor scales = scales_of({0.5, 3});
  const TensorInfo out = infer_resize(*node, {DType::Int8, {kDynamicDim, 2, 4, 6}}, nullptr, &scales, nullptr);
  EXPECT_EQ(out.dtype, DType::Int8);
  EXPECT_EQ(out.shape, (Shape{kDynamicDim, 2, 12, 3}));
  const Tensor sizes = sizes_of({5, 7});
  EXPECT_EQ(infer_resize(*node, {DType::Float32, {1, 1, kDynamicDim, 2}}, nullptr, nullptr, &sizes).shape,
            (Shape{1, 1, 7, 5}));
  const Tensor sizes4 = sizes_of({1, 1, 4, 4});
  const Tensor scales4 = scales_of({1, 1, 2, 2});
  auto plain = make_node("Resize", {});
  EXPECT_EQ(error_of<InvalidAttribute>(
                [&] { infer_resize(*plain, {DType::Float32, {1, 1, 2, 2}}, nullptr, &scales4, &sizes4); }),
            "inputs: both scales and sizes are given (only one may be)");
}

TEST(Resize, AnEmptyOutputNeedsNoTapsForItsLongAxes) {
  auto node = make_node("Resize", {{"mode", std::string("linear")}});
  const auto out = run_forward(*node, {Tensor(DType::Float32, {0, 3}), Tensor{}, Tensor{}, sizes_of({0, 1000000000000000})});
  EXPECT_EQ(out.outputs[0].shape(), (Shape{0, 1000000000000000}));
}

TEST(Resize, RefusesWhatItDoesNotImplement) {
  EXPECT_NE(error_of<InvalidAttribute>([&] { make_node("Resize", {{"mode", std::string("cubic")}}); }).find("mode"),
            std::string::npos);
  EXPECT_NE(error_of<InvalidAttribute>([&] { make_node("Resize", {{"antialias", std::int64_t{1}}}); }).find("antialias"),
            std::string::npos);
}

TEST(Resize, GradientsOverModesAxesAndScales) {
  std::mt19937_64 rng(11);
  const char* coordinate_modes[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                    "asymmetric"};
  const char* nearest_modes[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  int k = 0;
  for (const char* mode : {"nearest", "linear"})
    for (const char* ct : coordinate_modes) {
      const char* nm = nearest_modes[k++ % 4];
      auto node = make_node("Resize", {{"mode", std::string(mode)},
                                       {"coordinate_transformation_mode", std::string(ct)},
                                       {"nearest_mode", std::string(nm)}},
                            true, 0.5);
      // Up on one axis, down on another, a third untouched; then sizes over two axes.
      const Tensor x = random_uniform({2, 3, 4, 5}, rng);
      const auto r1 = check_gradient(*node, {x, Tensor{}, scales_of({1, 1.5, 0.6f, 1})});
      EXPECT_TRUE(r1.ok) << mode << " " << ct << " " << nm << "\n" << r1.failures;
      const auto r2 = check_gradient(*node, {x, Tensor{}, Tensor{}, sizes_of({2, 3, 7, 3})});
      EXPECT_TRUE(r2.ok) << mode << " " << ct << " " << nm << "\n" << r2.failures;
    }
}

}  // namespace
}  // namespace nodeflow
