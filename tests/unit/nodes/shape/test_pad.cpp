// Pad (ONNX Pad-21): the four modes against numpy.pad (pads wider than the
// axis included), negative pads that crop, axes, constant_value, every
// dtype, shape inference, refusals, and gradients where copied border
// elements add into their sources, over a seeded sweep.
#include <gtest/gtest.h>

#include <random>

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

Tensor pad(const std::string& mode, const Tensor& x, const std::vector<std::int64_t>& pads,
           const Tensor& value = Tensor(), const std::vector<std::int64_t>& axes = {}) {
  std::vector<Tensor> in{x, int64_list(pads), value};
  if (!axes.empty()) in.push_back(int64_list(axes));
  return forward_output("Pad", {{"mode", mode}}, in);
}

std::vector<double> pad_1d(const std::string& mode, std::int64_t begin, std::int64_t end) {
  return as_doubles(pad(mode, pattern({4}, 1, 100, 0, 1.0), {begin, end}));
}

TEST(Pad, ModesMatchNumpyPad) {
  // numpy.pad(np.arange(4), (b, e), mode).
  EXPECT_EQ(pad_1d("reflect", 3, 5), (std::vector<double>{3, 2, 1, 0, 1, 2, 3, 2, 1, 0, 1, 2}));
  EXPECT_EQ(pad_1d("edge", 2, 1), (std::vector<double>{0, 0, 0, 1, 2, 3, 3}));
  EXPECT_EQ(pad_1d("wrap", 5, 4), (std::vector<double>{3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(pad_1d("constant", 1, 2), (std::vector<double>{0, 0, 1, 2, 3, 0, 0}));
  // A single element reflects into itself.
  EXPECT_EQ(as_doubles(pad("reflect", pattern({1}, 1, 100, -7, 1.0), {2, 2})),
            (std::vector<double>{7, 7, 7, 7, 7}));
  // constant_value, 2-D: numpy.pad(arange(6).reshape(2, 3), ((1, 0), (0, 2)), constant_values=-2).
  const Tensor y = pad("constant", pattern({2, 3}, 1, 100, 0, 1.0), {1, 0, 0, 2}, testing::f64({}, {-2}));
  EXPECT_EQ(y.shape(), (Shape{3, 5}));
  EXPECT_EQ(as_doubles(y), (std::vector<double>{-2, -2, -2, -2, -2, 0, 1, 2, -2, -2, 3, 4, 5, -2, -2}));
}

TEST(Pad, NegativePadsCropFirst) {
  EXPECT_EQ(pad_1d("constant", -1, 2), (std::vector<double>{1, 2, 3, 0, 0}));
  EXPECT_EQ(pad_1d("constant", 1, -3), (std::vector<double>{0, 0}));
  EXPECT_EQ(pad_1d("constant", -4, 0), (std::vector<double>{}));
  // The copying modes copy from what the crop leaves: [1, 2, 3] reflected.
  EXPECT_EQ(pad_1d("reflect", -1, 3), (std::vector<double>{1, 2, 3, 2, 1, 2}));
  EXPECT_EQ(pad_1d("edge", 2, -2), (std::vector<double>{0, 0, 0, 1}));
  EXPECT_EQ(pad_1d("wrap", -3, 2), (std::vector<double>{3, 3, 3}));
  // Conformance pad_constant_axes_negative_pads_f32: axes [-1, 1] of [3, 4, 5].
  const Tensor y =
      pad("constant", pattern({3, 4, 5}, 1, 100, 0, 1.0), {2, -1, -2, 3}, testing::f64({}, {1.5}), {-1, 1});
  EXPECT_EQ(y.shape(), (Shape{3, 6, 5}));
  const std::vector<double> v = as_doubles(y);
  EXPECT_EQ(v[0], 1.5);          // axis 2 padded at the start
  EXPECT_EQ(v[2], 5.0);          // x[0, 1, 0]: axis 1 lost its first row
  EXPECT_EQ(v[4], 5.0 + 2);      // x[0, 1, 2]: axis 2 lost its last 2
  EXPECT_EQ(v[3 * 5 + 2], 1.5);  // axis 1's new rows
}

TEST(Pad, TakesEveryDtype) {
  for (DType t : kGraphDTypes) {
    const Tensor x = pattern({2, 2}, 1, 100, 0, 1.0, t);
    EXPECT_EQ(as_doubles(pad("edge", x, {0, 1, 1, 0}).cast(DType::Float64)),
              (std::vector<double>{0, 0, 1, 2, 2, 3, 2, 2, 3}));
    const Tensor c = pad("constant", x, {0, 0, 1, 0}, testing::f64({1}, {5}).cast(t));
    EXPECT_EQ(c.dtype(), t);
    EXPECT_EQ(as_doubles(c.cast(DType::Float64)), (std::vector<double>{0, 1, 2, 3, 5, 5}));
  }
}

TEST(Pad, InfersShapes) {
  auto node = make_node("Pad", {{"mode", std::string("reflect")}});
  const Tensor pads = int64_list({1, 2, 0, 1});
  const TensorInfo p{DType::Int64, {4}};
  const auto out = testing::infer(*node, {{DType::UInt8, {kDynamicDim, 3}}, p}, {nullptr, &pads});
  EXPECT_EQ(out[0].dtype, DType::UInt8);
  EXPECT_EQ(out[0].shape, (Shape{kDynamicDim, 6}));
}

TEST(Pad, RefusesImpossiblePads) {
  const Tensor x(DType::Float32, {2, 3});
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              pad("constant", x, {0, -2, 0, -2});
            }),
            "input 1 (pads): axis 1 of size 3 padded by -2 and -2 would have a negative size");
  EXPECT_EQ(
      error_of<ShapeMismatch>([&] {
        pad("reflect", x, {0, -3, 0, 1});
      }),
      "input 1 (pads): axis 1 of size 3 padded by -3 and 1 has no element left to copy into its border in "
      "mode reflect");
  EXPECT_EQ(
      error_of<ShapeMismatch>([&] {
        pad("edge", Tensor(DType::Float32, {0}), {1, 0});
      }),
      "input 1 (pads): axis 0 of size 0 padded by 1 and 0 has no element left to copy into its border in "
      "mode edge");
  EXPECT_EQ(pad("wrap", Tensor(DType::Float32, {0}), {0, 0}).shape(), (Shape{0}));
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              pad("constant", x, {1, 1});
            }),
            "input 1 (pads) has 2 values; Pad needs 2 per padded axis (4 for 2 axes)");
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              pad("constant", x, {0, std::numeric_limits<std::int64_t>::max(), 0, 1});
            }),
            "input 1 (pads): axis 1 of size 3 padded by 9223372036854775807 and 1 overflows int64");
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              pad("constant", x, {std::numeric_limits<std::int64_t>::min(), 0}, {}, {0});
            }),
            "input 1 (pads): pads[0] = -9223372036854775808 is out of range");
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              pad("constant", x, {1, 1, 1, 1}, {}, {0, -2});
            }),
            "input 3 (axes): axes[1] = -2 repeats axis 0 (axes[0] = 0)");
  EXPECT_EQ(error_of<UnsupportedDType>([&] {
              pad("constant", x, {1, 1, 1, 1}, testing::f64({}, {1}));
            }),
            "input 2 (constant_value) has dtype float64 but input 0 (data) has float32; Pad needs one dtype");
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              pad("constant", x, {1, 1, 1, 1}, Tensor(DType::Float32, {2}));
            }),
            "input 2 (constant_value) has shape [2]; Pad needs one value (a scalar)");
  EXPECT_EQ(error_of<InvalidAttribute>([&] {
              make_node("Pad", {{"mode", std::string("symmetric")}});
            }).find("attributes.mode"),
            0u);
}

TEST(Pad, BorderGradientsAddIntoTheirSources) {
  std::mt19937_64 rng(21);
  std::uniform_int_distribution<std::int64_t> pick(-1, 5);
  int trial = 0;
  for (const std::string mode : {"constant", "reflect", "edge", "wrap"}) {
    for (int k = 0; k < 6; ++k, ++trial) {
      const Shape shape{2 + k % 2, 3, 4};
      const Tensor x = testing::random_uniform(shape, rng);
      std::vector<std::int64_t> begins{pick(rng), pick(rng)};
      std::vector<std::int64_t> ends{pick(rng), pick(rng)};
      std::vector<std::int64_t> pads = begins;
      pads.insert(pads.end(), ends.begin(), ends.end());
      auto node = make_node("Pad", {{"mode", mode}}, true, k % 2 ? 0.5 : 1.0);
      const testing::GradCheckResult r =
          testing::check_gradient(*node, {x, int64_list(pads), Tensor(), int64_list({-1, 1})});
      EXPECT_TRUE(r.ok) << mode << " pads " << ::testing::PrintToString(pads) << "\n" << r.failures;
    }
  }
}

}  // namespace
}  // namespace nodeflow
