// MaxRoiPool (ONNX MaxRoiPool-22; bins as docs/pooling.md, "MaxRoiPool"):
// scaling and rounding of the roi corners, malformed and clipped rois, empty
// bins, ties and NaN, the gradient to each bin's winner (none to rois), the
// batch index and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
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

// 0, 1, 2, ... in an N x C x H x W tensor.
Tensor arange(Shape shape) {
  Tensor t(DType::Float64, shape);
  std::iota(t.values<double>().begin(), t.values<double>().end(), 0.0);
  return t;
}

std::vector<double> pool(const Attributes& attrs, const Tensor& x, const Tensor& rois) {
  return as_doubles(run_forward(*make_node("MaxRoiPool", attrs), {x, rois}, 1, false).outputs[0]);
}

const Attributes k2x2{{"pooled_shape", ints{2, 2}}};
const Attributes k1x1{{"pooled_shape", ints{1, 1}}};

TEST(MaxRoiPool, LargestElementOfEachBin) {
  // 4 x 4 image 0..15; the whole image in 2 x 2 bins: the quadrants' maxima.
  const Tensor x = arange({1, 1, 4, 4});
  EXPECT_EQ(pool(k2x2, x, testing::f64({1, 5}, {0, 0, 0, 3, 3})), (std::vector<double>{5, 7, 13, 15}));
  // 3 rows in 2 bins: [floor(0), ceil(1.5)) = [0, 2) and [floor(1.5), ceil(3)) = [1, 3): they overlap.
  EXPECT_EQ(pool({{"pooled_shape", ints{2, 1}}}, x, testing::f64({1, 5}, {0, 0, 0, 0, 2})),
            (std::vector<double>{4, 8}));
}

TEST(MaxRoiPool, CornersAreScaledAndRoundedHalfAwayFromZero) {
  const Tensor x = arange({1, 1, 6, 6});
  // scale 0.5: x1 = y1 = round(0.5) = 1, x2 = y2 = round(2.5) = 3 (inclusive): max at (3, 3).
  EXPECT_EQ(pool({{"pooled_shape", ints{1, 1}}, {"spatial_scale", 0.5}}, x,
                 testing::f64({1, 5}, {0, 1, 1, 5, 5})),
            (std::vector<double>{21}));
  // round(-0.5) = -1: the roi starts before the image; its first bin row is clipped.
  EXPECT_EQ(pool({{"pooled_shape", ints{2, 1}}}, x, testing::f64({1, 5}, {0, 2, -0.5, 2, 0.4})),
            (std::vector<double>{0, 2}));
}

TEST(MaxRoiPool, MalformedRoiIsOneByOneAndOutsideBinsAreZero) {
  const Tensor x = arange({1, 1, 4, 4});
  // x2 < x1 and y2 < y1: a 1 x 1 roi at (y1, x1) = (2, 3), every bin that element.
  EXPECT_EQ(pool(k2x2, x, testing::f64({1, 5}, {0, 3, 2, 1, 0})), (std::vector<double>{11, 11, 11, 11}));
  // A roi from (3, 3) to (6, 6): only its first bin meets the image; the others are empty.
  EXPECT_EQ(pool(k2x2, x, testing::f64({1, 5}, {0, 3, 3, 6, 6})), (std::vector<double>{15, 0, 0, 0}));
  // Entirely outside: all bins empty.
  EXPECT_EQ(pool(k2x2, x, testing::f64({1, 5}, {0, 10, 10, 12, 12})), (std::vector<double>(4, 0.0)));
}

TEST(MaxRoiPool, BatchIndexPicksTheImage) {
  const Tensor x = arange({2, 2, 2, 2});
  // Image 1, both channels; 0.7 truncates to 0 (as onnxruntime does).
  EXPECT_EQ(pool(k1x1, x, testing::f64({2, 5}, {1, 0, 0, 1, 1, 0.7, 0, 0, 0, 0})),
            (std::vector<double>{11, 15, 0, 4}));
  EXPECT_EQ(testing::error_of<RunError>([&] { pool(k1x1, x, testing::f64({1, 5}, {2, 0, 0, 1, 1})); }),
            "MaxRoiPool: roi 0 has batch index 2.000000, outside [0, 2)");
  EXPECT_EQ(testing::error_of<RunError>([&] { pool(k1x1, x, testing::f64({1, 5}, {-1, 0, 0, 1, 1})); }),
            "MaxRoiPool: roi 0 has batch index -1.000000, outside [0, 2)");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(testing::error_of<RunError>([&] { pool(k1x1, x, testing::f64({1, 5}, {0, 0, nan, 1, 1})); }),
            "MaxRoiPool: roi 0 has a NaN corner");
  // Infinite corners are clamped, not undefined: the roi covers the image.
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(pool(k1x1, x, testing::f64({1, 5}, {0, -inf, -inf, inf, inf})), (std::vector<double>{3, 7}));
}

TEST(MaxRoiPool, TiesGoToTheFirstElementAndNaNWins) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = testing::f64({1, 1, 2, 2}, {7, 7, 7, 1});
  auto node = make_node("MaxRoiPool", k1x1);
  const Tensor rois = testing::f64({1, 5}, {0, 0, 0, 1, 1});
  const auto f = run_forward(*node, {x, rois});
  std::vector<Tensor> dx{testing::f64({1, 1, 2, 2}, {0, 0, 0, 0}), testing::f64({1, 5}, {0, 0, 0, 0, 0})};
  testing::run_backward(*node, {x, rois}, f, {testing::f64({1, 1, 1, 1}, {1})}, dx);
  EXPECT_EQ(as_doubles(dx[0]), (std::vector<double>{1, 0, 0, 0}));
  const auto y = pool(k1x1, testing::f64({1, 1, 2, 2}, {1, nan, 9, nan}), rois);
  EXPECT_TRUE(std::isnan(y[0]));
}

TEST(MaxRoiPool, GradientGoesToEachWinnerAndAddsIntoTheBuffer) {
  // Overlapping bins (rows [0, 2) and [1, 3)) and two rois: element (1, 2),
  // holding 9, wins all four bins; lda_coeff 0.5 scales the sum.
  const Tensor x = testing::f64({1, 1, 3, 3}, {0, 1, 2, 3, 4, 9, 5, 6, 7});
  const Tensor rois = testing::f64({2, 5}, {0, 0, 0, 2, 2, 0, 1, 1, 2, 1});
  auto node = make_node("MaxRoiPool", {{"pooled_shape", ints{2, 1}}}, true, 0.5);
  const auto f = run_forward(*node, {x, rois});
  EXPECT_EQ(as_doubles(f.outputs[0]), (std::vector<double>{9, 9, 9, 9}));
  std::vector<Tensor> dx{testing::f64({1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1}),
                         testing::f64({2, 5}, {5, 5, 5, 5, 5, 5, 5, 5, 5, 5})};
  testing::run_backward(*node, {x, rois}, f, {testing::f64({2, 1, 2, 1}, {1, 2, 4, 8})}, dx);
  EXPECT_EQ(as_doubles(dx[0]), (std::vector<double>{1, 1, 1, 1, 1, 8.5, 1, 1, 1}));
  EXPECT_EQ(as_doubles(dx[1]), std::vector<double>(10, 5.0));  // rois: untouched
}

TEST(MaxRoiPool, GradientMatchesFiniteDifferencesOverASeededSweep) {
  std::mt19937_64 rng(7);
  for (int k = 0; k < 12; ++k) {
    const std::int64_t n = 1 + k % 2, c = 1 + k % 3, h = 3 + k % 4, w = 4 + k % 3;
    Tensor x(DType::Float64, {n, c, h, w});
    // Distinct values: a small step never changes a winner.
    std::vector<double> v(static_cast<std::size_t>(x.numel()));
    std::iota(v.begin(), v.end(), 0.0);
    std::shuffle(v.begin(), v.end(), rng);
    for (std::size_t i = 0; i < v.size(); ++i) x.values<double>()[i] = 0.1 * v[i];
    const std::int64_t rois_count = 1 + k % 3;
    Tensor rois(DType::Float64, {rois_count, 5});
    auto r = rois.values<double>();
    std::uniform_real_distribution<double> corner(-2.0, 2.0 * static_cast<double>(w) + 2.0);
    for (std::int64_t i = 0; i < rois_count; ++i) {
      // Mid-way between integers: a step never changes the truncated image index.
      r[5 * i] = static_cast<double>(i % n) + 0.5;
      // Quarter-integer corners (times spatial_scale 0.5): no rounding tie within a step.
      for (int j = 1; j < 5; ++j) r[5 * i + j] = std::floor(corner(rng)) + 0.25;
    }
    const Attributes attrs{{"pooled_shape", ints{1 + k % 3, 1 + k % 2}}, {"spatial_scale", k % 2 ? 0.5 : 1.0}};
    auto node = make_node("MaxRoiPool", attrs, true, k % 4 == 0 ? 0.5 : 1.0);
    const testing::GradCheckResult res = testing::check_gradient(*node, {x, rois}, {.seed = 100u + k});
    EXPECT_TRUE(res.ok) << "config " << k << "\n" << res.failures;
  }
}

TEST(MaxRoiPool, FloatTypesAndThreads) {
  std::mt19937_64 rng(3);
  const Tensor x = testing::random_uniform({2, 16, 40, 40}, rng, 1.0);
  Tensor rois(DType::Float64, {64, 5});
  auto r = rois.values<double>();
  for (std::int64_t i = 0; i < 64; ++i) {
    r[5 * i] = static_cast<double>(i % 2);
    r[5 * i + 1] = static_cast<double>(i % 30);
    r[5 * i + 2] = static_cast<double>(i % 20);
    r[5 * i + 3] = static_cast<double>(i % 30 + 9);
    r[5 * i + 4] = static_cast<double>(i % 20 + 13);
  }
  auto node = make_node("MaxRoiPool", {{"pooled_shape", ints{7, 7}}});
  const auto want = pool({{"pooled_shape", ints{7, 7}}}, x, rois);
  for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
    std::vector<Tensor> inputs{x.cast(dt), rois.cast(dt)};
    std::vector<Tensor> y1(1), y2(1);
    node->forward(ForwardContext{inputs, y1, nullptr});
    ForwardContext two{inputs, y2, nullptr};
    two.threads = 2;
    node->forward(two);
    ASSERT_EQ(y2[0].dtype(), dt);
    EXPECT_EQ(as_doubles(y1[0]), as_doubles(y2[0]));
    // A max is one of the elements: want rounded to the dtype.
    testing::expect_near(as_doubles(y2[0]), want, dt == DType::Float32 ? 1e-7 : 1e-2);
  }
}

TEST(MaxRoiPool, ShapeInferenceAndRefusals) {
  auto node = make_node("MaxRoiPool", {{"pooled_shape", ints{3, 2}}});
  const auto out = testing::infer(*node, {{DType::Float16, {2, 8, 10, 12}}, {DType::Float16, {kDynamicDim, 5}}});
  EXPECT_EQ(out[0].dtype, DType::Float16);
  EXPECT_EQ(out[0].shape, (Shape{kDynamicDim, 8, 3, 2}));
  EXPECT_EQ(testing::error_of<ShapeMismatch>(
                [&] { testing::infer(*node, {{DType::Float32, {2, 8, 10}}, {DType::Float32, {1, 5}}}); }),
            "input 0 (X) has shape [2, 8, 10]; MaxRoiPool needs rank 4 (N x C x H x W)");
  EXPECT_EQ(testing::error_of<ShapeMismatch>(
                [&] { testing::infer(*node, {{DType::Float32, {2, 8, 10, 10}}, {DType::Float32, {1, 4}}}); }),
            "input 1 (rois) has shape [1, 4]; MaxRoiPool needs num_rois x 5 (batch index, x1, y1, x2, y2)");
  EXPECT_EQ(testing::error_of<UnsupportedDType>(
                [&] { testing::infer(*node, {{DType::Float32, {2, 8, 10, 10}}, {DType::Float64, {1, 5}}}); }),
            "input 1 (rois) has dtype float64 but input 0 (X) has float32; MaxRoiPool needs one dtype");
  EXPECT_EQ(testing::error_of<UnsupportedDType>(
                [&] { testing::infer(*node, {{DType::Int8, {2, 8, 10, 10}}, {DType::Int8, {1, 5}}}); }),
            "MaxRoiPool does not take dtype int8 (input 0 (X); allowed: float32, float64, float16, bfloat16)");
  EXPECT_EQ(testing::error_of<InvalidAttribute>([] { make_node("MaxRoiPool", {{"pooled_shape", ints{2, 2, 2}}}); }),
            "attributes.pooled_shape: expected 2 values (pooled_h, pooled_w), got [2, 2, 2]");
  EXPECT_THROW(make_node("MaxRoiPool", {{"pooled_shape", ints{2}}}), InvalidAttribute);
  EXPECT_THROW(make_node("MaxRoiPool", {{"pooled_shape", ints{0, 2}}}), InvalidAttribute);
  EXPECT_THROW(make_node("MaxRoiPool", {}), InvalidAttribute);
  const OpSchema* s = OpRegistry::global().find("MaxRoiPool");
  ASSERT_NE(s, nullptr);
  EXPECT_FALSE(receives_gradient(s->inputs[1]));
  EXPECT_EQ(s->min_inputs, 2u);
}

}  // namespace
}  // namespace nodeflow
