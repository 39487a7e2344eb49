// Clip (ONNX Clip-13): optional scalar min/max inputs, min > max, the
// gradient rule of docs/operators.md (passes where min <= x <= max, bounds
// included; none to min/max), the integer dtypes, and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "support/error_of.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::f64;
using testing::make_node;
using testing::run_forward;

const Tensor kClipX = f64({2, 4}, {-2.0, -0.5, -0.25, 0.0, 0.5, 0.75, 1.0, 3.0});

Tensor scalar(double v) { return Tensor::from<double>({}, {v}); }

std::vector<double> clip(const std::vector<Tensor>& inputs) {
  return as_doubles(run_forward(*make_node("Clip", {}), inputs, 1, false).outputs[0]);
}

// dx after one backward of dy = 1 + index into a buffer pre-filled with 100.
std::vector<double> clip_grad(const std::vector<Tensor>& inputs, double lda = 1.0) {
  auto node = make_node("Clip", {}, true, lda);
  const testing::ForwardResult f = run_forward(*node, inputs, 1, true);
  Tensor dy(DType::Float64, kClipX.shape());
  for (std::size_t i = 0; i < dy.values<double>().size(); ++i) dy.values<double>()[i] = 1.0 + i;
  std::vector<Tensor> dx(inputs.size());
  dx[0] = f64({2, 4}, {100, 100, 100, 100, 100, 100, 100, 100});
  testing::run_backward(*node, inputs, f, {dy}, dx);
  return as_doubles(dx[0]);
}

TEST(Clip, ClampsToTheGivenBounds) {
  EXPECT_EQ(clip({kClipX, scalar(-0.5), scalar(0.75)}),
            (std::vector<double>{-0.5, -0.5, -0.25, 0.0, 0.5, 0.75, 0.75, 0.75}));
  // Absent bounds are no bounds: max only, min only, neither.
  EXPECT_EQ(clip({kClipX, Tensor{}, scalar(0.75)}),
            (std::vector<double>{-2.0, -0.5, -0.25, 0.0, 0.5, 0.75, 0.75, 0.75}));
  EXPECT_EQ(clip({kClipX, scalar(0.0)}), (std::vector<double>{0, 0, 0, 0, 0.5, 0.75, 1.0, 3.0}));
  EXPECT_EQ(clip({kClipX}), as_doubles(kClipX));
  // A bound of shape [1] is a scalar too.
  EXPECT_EQ(clip({kClipX, Tensor::from<double>({1}, {0.0}), Tensor::from<double>({1}, {1.0})}),
            (std::vector<double>{0, 0, 0, 0, 0.5, 0.75, 1.0, 1.0}));
}

TEST(Clip, MinAboveMaxGivesMaxAndNoGradient) {
  EXPECT_EQ(clip({kClipX, scalar(1.0), scalar(-1.0)}), std::vector<double>(8, -1.0));
  EXPECT_EQ(clip_grad({kClipX, scalar(1.0), scalar(-1.0)}), std::vector<double>(8, 100.0));
}

TEST(Clip, GradientPassesInsideTheBoundsIncludingThem) {
  // -0.5 and 0.75 are on the bounds: they pass; -2, 1 and 3 are outside.
  EXPECT_EQ(clip_grad({kClipX, scalar(-0.5), scalar(0.75)}),
            (std::vector<double>{100, 102, 103, 104, 105, 106, 100, 100}));
  // lda_coeff scales it; without bounds everything passes.
  EXPECT_EQ(clip_grad({kClipX}, 0.5), (std::vector<double>{100.5, 101, 101.5, 102, 102.5, 103, 103.5, 104}));
  // Equal bounds: only the elements equal to them pass.
  EXPECT_EQ(clip_grad({kClipX, scalar(0.0), scalar(0.0)}),
            (std::vector<double>{100, 100, 100, 104, 100, 100, 100, 100}));
}

TEST(Clip, GradientMatchesFiniteDifferencesWithoutBounds) {
  auto node = make_node("Clip", {}, true, -2.0);
  const testing::GradCheckResult r = testing::check_gradient(*node, {kClipX});
  EXPECT_TRUE(r.ok) << r.failures;
}

TEST(Clip, NaNPassesThroughAndGetsNoGradient) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto y = clip({f64({2}, {nan, 5.0}), scalar(0.0), scalar(1.0)});
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 1.0);
}

TEST(Clip, IntegerDtypesClipInTheirOwnType) {
  const Tensor x8 = Tensor::from<std::int8_t>({4}, {-128, -3, 5, 127});
  const Tensor y8 = run_forward(*make_node("Clip", {}), {x8, Tensor::from<std::int8_t>({}, {-4}),
                                                         Tensor::from<std::int8_t>({}, {100})},
                                1, false)
                        .outputs[0];
  ASSERT_EQ(y8.dtype(), DType::Int8);
  EXPECT_EQ(std::vector<std::int8_t>(y8.values<std::int8_t>().begin(), y8.values<std::int8_t>().end()),
            (std::vector<std::int8_t>{-4, -3, 5, 100}));
  const Tensor xu = Tensor::from<std::uint8_t>({3}, {0, 7, 255});
  const Tensor yu =
      run_forward(*make_node("Clip", {}), {xu, Tensor{}, Tensor::from<std::uint8_t>({1}, {200})}, 1, false)
          .outputs[0];
  EXPECT_EQ(std::vector<std::uint8_t>(yu.values<std::uint8_t>().begin(), yu.values<std::uint8_t>().end()),
            (std::vector<std::uint8_t>{0, 7, 200}));
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  const Tensor xi = Tensor::from<std::int64_t>({3}, {-big, 0, big});
  const Tensor yi =
      run_forward(*make_node("Clip", {}), {xi, Tensor::from<std::int64_t>({}, {-5})}, 1, false).outputs[0];
  EXPECT_EQ(std::vector<std::int64_t>(yi.values<std::int64_t>().begin(), yi.values<std::int64_t>().end()),
            (std::vector<std::int64_t>{-5, 0, big}));
}

TEST(Clip, HalfClipsInFloat32) {
  const Tensor x = kClipX.cast(DType::Float16);
  const Tensor y = run_forward(*make_node("Clip", {}),
                               {x, scalar(-0.5).cast(DType::Float16), scalar(0.75).cast(DType::Float16)}, 1,
                               false)
                       .outputs[0];
  EXPECT_EQ(y.dtype(), DType::Float16);
  EXPECT_EQ(as_doubles(y), (std::vector<double>{-0.5, -0.5, -0.25, 0.0, 0.5, 0.75, 0.75, 0.75}));
}

TEST(Clip, ShapeInferenceAndRefusals) {
  auto node = make_node("Clip", {});
  const auto out = testing::infer(*node, {{DType::Int64, {2, kDynamicDim}}, {DType::Int64, {}}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype, DType::Int64);
  EXPECT_EQ(out[0].shape, (Shape{2, kDynamicDim}));
  EXPECT_EQ(testing::error_of<ShapeMismatch>([&] {
              testing::infer(*node, {{DType::Float32, {3}}, {DType::Float32, {2}}});
            }),
            "input 1 (min) of Clip must be a scalar, got shape [2]");
  EXPECT_EQ(testing::error_of<UnsupportedDType>([&] {
              testing::infer(*node, {{DType::Float32, {3}}, {DType::Float32, {1}}, {DType::Float64, {}}});
            }),
            "input 2 (max) has dtype float64 but input 0 (input) has float32; Clip needs one dtype");
  EXPECT_EQ(testing::error_of<ShapeMismatch>([&] { clip({kClipX, Tensor::from<double>({2}, {0.0, 1.0})}); }),
            "input 1 (min) of Clip must be a scalar, got shape [2]");
  const OpSchema* s = OpRegistry::global().find("Clip");
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->inputs.size(), 3u);
  EXPECT_FALSE(receives_gradient(s->inputs[1]));
  EXPECT_FALSE(receives_gradient(s->inputs[2]));
  EXPECT_TRUE(receives_gradient(s->inputs[0]));
  EXPECT_EQ(s->min_inputs, 1u);
}

}  // namespace
}  // namespace nodeflow
