// GlobalLpPool (ONNX GlobalLpPool-22): LpPool with one window over all
// spatial axes (docs/pooling.md, "Values", "Backward"): its values and
// gradients are LpPool's over a whole-plane kernel, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "support/error_of.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using ints = std::vector<std::int64_t>;
using testing::as_doubles;
using testing::make_node;
using testing::run_forward;

TEST(GlobalLpPool, NormOfEachPlane) {
  // Planes [3, 4] and [-1, 2, ... ] of a 1 x 2 x 2 x 2 input.
  const Tensor x = testing::f64({1, 2, 2, 2}, {3, 0, 0, 4, -1, 2, -2, 0});
  const auto y2 = run_forward(*make_node("GlobalLpPool", {}), {x}, 1, false).outputs[0];
  EXPECT_EQ(y2.shape(), (Shape{1, 2, 1, 1}));
  EXPECT_EQ(as_doubles(y2), (std::vector<double>{5, 3}));
  EXPECT_EQ(as_doubles(run_forward(*make_node("GlobalLpPool", {{"p", std::int64_t{1}}}), {x}, 1, false)
                           .outputs[0]),
            (std::vector<double>{7, 5}));
  const auto y3 =
      as_doubles(run_forward(*make_node("GlobalLpPool", {{"p", std::int64_t{3}}}), {x}, 1, false).outputs[0]);
  EXPECT_NEAR(y3[0], std::cbrt(91.0), 1e-14);
  EXPECT_NEAR(y3[1], std::cbrt(17.0), 1e-14);
}

TEST(GlobalLpPool, IsLpPoolOverTheWholePlaneForwardAndBackward) {
  std::mt19937_64 rng(22);
  for (const Shape& shape : {Shape{2, 3, 5}, Shape{1, 2, 3, 4}, Shape{2, 1, 2, 3, 2}, Shape{1, 4, 9, 9}})
    for (std::int64_t p : {1, 2, 3})
      for (DType dt : {DType::Float32, DType::Float64, DType::Float16}) {
        ints kernel(shape.begin() + 2, shape.end());
        auto global = make_node("GlobalLpPool", {{"p", p}});
        auto lp = make_node("LpPool", {{"p", p}, {"kernel_shape", kernel}});
        const Tensor x = testing::random_uniform(shape, rng, 3.0).cast(dt);
        const auto fg = run_forward(*global, {x});
        const auto fl = run_forward(*lp, {x});
        EXPECT_EQ(fg.outputs[0].shape(), fl.outputs[0].shape());
        EXPECT_EQ(as_doubles(fg.outputs[0]), as_doubles(fl.outputs[0]));
        Shape out{shape[0], shape[1]};
        out.resize(shape.size(), 1);
        const Tensor dy = testing::random_uniform(out, rng, 1.0).cast(dt);
        const Tensor prefill = testing::random_uniform(shape, rng, 1.0).cast(dt);
        std::vector<Tensor> dg{prefill.clone()}, dl{prefill.clone()};
        testing::run_backward(*global, {x}, fg, {dy}, dg);
        testing::run_backward(*lp, {x}, fl, {dy}, dl);
        EXPECT_EQ(as_doubles(dg[0]), as_doubles(dl[0])) << to_string(shape) << " p " << p;
      }
}

TEST(GlobalLpPool, GradientIsZeroWhereTheOutputIsZero) {
  // Plane 0 is all zeros (y = 0, gradient 0); plane 1 has an isolated zero.
  const Tensor x = testing::f64({1, 2, 3}, {0, 0, 0, 3, 0, -4});
  for (std::int64_t p : {1, 2, 3}) {
    auto node = make_node("GlobalLpPool", {{"p", p}});
    const auto f = run_forward(*node, {x});
    std::vector<Tensor> dx{testing::f64({1, 2, 3}, {1, 1, 1, 1, 1, 1})};
    testing::run_backward(*node, {x}, f, {testing::f64({1, 2, 1}, {2, 1})}, dx);
    const auto g = as_doubles(dx[0]);
    EXPECT_EQ(g[0], 1.0);
    EXPECT_EQ(g[1], 1.0);
    EXPECT_EQ(g[2], 1.0);
    EXPECT_EQ(g[4], 1.0) << "p " << p;
  }
}

TEST(GlobalLpPool, ShapeInferenceAndRefusals) {
  auto node = make_node("GlobalLpPool", {});
  const auto out = testing::infer(*node, {{DType::BFloat16, {kDynamicDim, 3, kDynamicDim, 7}}});
  EXPECT_EQ(out[0].dtype, DType::BFloat16);
  EXPECT_EQ(out[0].shape, (Shape{kDynamicDim, 3, 1, 1}));
  EXPECT_EQ(testing::error_of<ShapeMismatch>([&] { testing::infer(*node, {{DType::Float32, {2, 3}}}); }),
            "input 0 has rank 2 (shape [2, 3]); GlobalLpPool needs rank >= 3 (N x C x D1 ...)");
  EXPECT_EQ(testing::error_of<UnsupportedDType>([&] { testing::infer(*node, {{DType::Int8, {1, 1, 2}}}); }),
            "GlobalLpPool does not take dtype int8 (input 0; allowed: float32, float64, float16, bfloat16)");
  EXPECT_EQ(testing::error_of<InvalidAttribute>([] { make_node("GlobalLpPool", {{"p", std::int64_t{0}}}); })
                .substr(0, 14),
            "attributes.p: ");
  EXPECT_NE(testing::error_of<InvalidAttribute>([] { make_node("GlobalLpPool", {{"kernel_shape", ints{2}}}); })
                .find("unknown attribute 'kernel_shape' for GlobalLpPool (known: p)"),
            std::string::npos);
  const OpSchema* s = OpRegistry::global().find("GlobalLpPool");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->definition, "ONNX GlobalLpPool-22");
  ASSERT_EQ(s->attributes.size(), 1u);
  EXPECT_EQ(std::get<std::int64_t>(*s->attributes[0].default_value), 2);
}

}  // namespace
}  // namespace nodeflow
