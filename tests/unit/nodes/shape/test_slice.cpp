// Slice (ONNX Slice-13): ONNX's clamping of starts and ends for both step
// signs (INT64_MIN/MAX, out-of-range values, INT64_MIN steps), axes and
// steps, every dtype, shape inference, refusals at load, and the gradient
// (the exact inverse movement) over a seeded sweep.
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "core/errors.hpp"
#include "core/graph_builder.hpp"
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

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

// Slice of x along the given axes (empty axes/steps: absent inputs).
Tensor slice(const Tensor& x, const std::vector<std::int64_t>& starts, const std::vector<std::int64_t>& ends,
             const std::vector<std::int64_t>& axes = {}, const std::vector<std::int64_t>& steps = {}) {
  std::vector<Tensor> in{x, int64_list(starts), int64_list(ends), axes.empty() ? Tensor() : int64_list(axes),
                         steps.empty() ? Tensor() : int64_list(steps)};
  return forward_output("Slice", {}, in);
}

// The elements of arange(n) that Slice(start, end, step) takes, by ONNX's
// definition written as a loop (the node computes a count instead).
std::vector<double> reference_1d(std::int64_t n, std::int64_t start, std::int64_t end, std::int64_t step) {
  auto clamp = [](std::int64_t v, std::int64_t lo, std::int64_t hi) { return std::min(std::max(v, lo), hi); };
  if (start < 0) start += n;
  if (end < 0) end += n;
  std::vector<double> out;
  if (step > 0) {
    for (std::int64_t i = clamp(start, 0, n); i < clamp(end, 0, n); i += step) {
      out.push_back(static_cast<double>(i));
      if (step > n) break;
    }
  } else if (n > 0) {
    for (std::int64_t i = clamp(start, 0, n - 1); i > clamp(end, -1, n - 1); i += step) {
      out.push_back(static_cast<double>(i));
      if (step < -n) break;
    }
  }
  return out;
}

TEST(Slice, ClampsStartsAndEndsLikeOnnx) {
  const std::int64_t n = 7;
  const Tensor x = pattern({n}, 1, 100, 0, 1.0);
  const std::vector<std::int64_t> points{kMin, -100, -8, -7, -3, -1, 0, 1, 3, 6, 7, 8, 100, kMax};
  for (std::int64_t step : std::vector<std::int64_t>{kMin, -8, -3, -2, -1, 1, 2, 3, 7, kMax})
    for (std::int64_t start : points)
      for (std::int64_t end : points)
        EXPECT_EQ(as_doubles(slice(x, {start}, {end}, {}, {step})), reference_1d(n, start, end, step))
            << "start " << start << " end " << end << " step " << step;
  // An empty axis gives an empty slice whatever the values.
  EXPECT_EQ(slice(Tensor(DType::Float32, {0, 3}), {-1}, {kMin}, {0}, {-1}).shape(), (Shape{0, 3}));
}

TEST(Slice, AxesAndStepsPickTheAxes) {
  // The case of conformance slice_axes_steps_backward_f64: [4, 5, 6], axes [-1, 1].
  const Tensor x = pattern({4, 5, 6}, 1, 1000, 0, 1.0);
  const Tensor y = slice(x, {1, -1}, {kMax, -6}, {-1, 1}, {2, -2});
  ASSERT_EQ(y.shape(), (Shape{4, 3, 3}));
  const std::vector<double> v = as_doubles(y);
  for (std::int64_t a = 0; a < 4; ++a)
    for (std::int64_t b = 0; b < 3; ++b)
      for (std::int64_t c = 0; c < 3; ++c)
        EXPECT_EQ(v[static_cast<std::size_t>((a * 3 + b) * 3 + c)],
                  static_cast<double>(a * 30 + (4 - 2 * b) * 6 + (1 + 2 * c)));
  // Default axes are 0, 1, ...: only the first axis here.
  EXPECT_EQ(slice(x, {1}, {3}).shape(), (Shape{2, 5, 6}));
}

TEST(Slice, TakesEveryDtype) {
  for (DType t : kGraphDTypes) {
    const Tensor x = pattern({3, 4}, 1, 100, 0, 1.0, t);
    const Tensor y = slice(x, {-1, 3}, {0, kMin}, {0, 1}, {-2, -3});
    EXPECT_EQ(y.dtype(), t);
    EXPECT_EQ(as_doubles(y.cast(DType::Float64)), (std::vector<double>{11, 8}));
  }
}

TEST(Slice, InfersShapesAndKeepsDynamicAxes) {
  auto node = make_node("Slice", {});
  const Tensor starts = int64_list({1});
  const Tensor ends = int64_list({-1});
  const Tensor axes = int64_list({1});
  const TensorInfo l1{DType::Int64, {1}};
  auto out = testing::infer(*node, {{DType::Float32, {kDynamicDim, 10}}, l1, l1, l1},
                            {nullptr, &starts, &ends, &axes});
  EXPECT_EQ(out[0].shape, (Shape{kDynamicDim, 8}));
  out =
      testing::infer(*node, {{DType::Int8, {4, kDynamicDim}}, l1, l1, l1}, {nullptr, &starts, &ends, &axes});
  EXPECT_EQ(out[0].dtype, DType::Int8);
  EXPECT_EQ(out[0].shape, (Shape{4, kDynamicDim}));
}

TEST(Slice, RefusesBadStartsEndsAxesAndSteps) {
  const Tensor x(DType::Float32, {4, 4});
  EXPECT_EQ(error_of<ShapeMismatch>([&] { slice(x, {0}, {4}, {0}, {0}); }),
            "input 4 (steps): steps[0] = 0: a step must not be 0");
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              slice(x, {0, 0}, {4, 4}, {1, -1});
            }),
            "input 3 (axes): axes[1] = -1 repeats axis 1 (axes[0] = 1)");
  EXPECT_EQ(error_of<ShapeMismatch>([&] { slice(x, {0}, {4}, {2}); }),
            "input 3 (axes): axes[0] = 2 is outside [-2, 1] for input rank 2");
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              slice(x, {0, 1}, {4});
            }),
            "input 2 (ends) has 1 values but input 1 (starts) has 2; Slice needs one per sliced axis");
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              slice(x, {0}, {4}, {0, 1});
            }),
            "input 3 (axes) has 2 values but input 1 (starts) has 1; Slice needs one per sliced axis");
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              slice(x, {0, 0, 0}, {4, 4, 4});
            }),
            "input 1 (starts) has 3 values for data of rank 2 (and no axes)");
  EXPECT_EQ(error_of<UnsupportedDType>([&] {
              forward_output("Slice", {}, {x, Tensor(DType::Float32, {1}), int64_list({1})});
            }),
            "Slice needs dtype int64 for input 1 (starts), got float32");
  // In a graph, at load, naming the node (conformance error_slice_steps_zero).
  GraphBuilder b;
  b.add_input("x", DType::Float32, {4, 4});
  b.add_initializer("starts", int64_list({0}))
      .add_initializer("ends", int64_list({4}))
      .add_initializer("steps", int64_list({0}));
  const std::string message = error_of<ShapeMismatch>([&] {
    b.add_node("Slice", "sl1", {"x", "starts", "ends", "", "steps"});
  });
  EXPECT_NE(message.find("(sl1)"), std::string::npos) << message;
  EXPECT_NE(message.find("steps"), std::string::npos) << message;
}

TEST(Slice, GradientGoesBackToTheElementsTaken) {
  std::mt19937_64 rng(19);
  std::uniform_int_distribution<std::int64_t> pick(-7, 7);
  for (int trial = 0; trial < 24; ++trial) {
    const Shape shape{2 + trial % 3, 5, 1 + trial % 4};
    const Tensor x = testing::random_uniform(shape, rng);
    std::vector<std::int64_t> starts, ends, axes, steps;
    for (std::int64_t a : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{1}}) {
      if ((trial + a) % 3 == 0) continue;
      std::int64_t step = pick(rng) / 2;
      if (step == 0) step = -1;
      axes.push_back(a);
      starts.push_back(pick(rng));
      ends.push_back(pick(rng));
      steps.push_back(step);
    }
    const double lda = trial % 2 ? 0.5 : 1.0;
    auto node = make_node("Slice", {}, true, lda);
    const testing::GradCheckResult r = testing::check_gradient(
        *node, {x, int64_list(starts), int64_list(ends), int64_list(axes), int64_list(steps)});
    EXPECT_TRUE(r.ok) << "trial " << trial << "\n" << r.failures;
  }
}

}  // namespace
}  // namespace nodeflow
