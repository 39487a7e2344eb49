// The conformance comparison rules (tests/conformance/README.md, "Comparing").
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "support/npy_compare.hpp"

namespace nodeflow::testing {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Tensor f32(std::initializer_list<float> v) {
  return Tensor::from<float>({static_cast<std::int64_t>(v.size())}, v);
}
Tensor f64(std::initializer_list<double> v) {
  return Tensor::from<double>({static_cast<std::int64_t>(v.size())}, v);
}

bool matches(const Tensor& got, const Tensor& want, Tolerance tol) {
  return tensor_mismatch(got, want, tol).empty();
}

TEST(NpyCompare, FloatBoundIsAtolPlusRtolTimesWant) {
  // Bound at want = 100: 1e-3 + 1e-5 * 100 = 2e-3.
  const Tolerance tol{1e-5, 1e-3};
  EXPECT_TRUE(matches(f32({100.0019f}), f32({100.0f}), tol));
  EXPECT_FALSE(matches(f32({100.0022f}), f32({100.0f}), tol));
  // The bound scales with |want|, not |got|.
  EXPECT_TRUE(matches(f32({-100.0019f}), f32({-100.0f}), tol));
}

TEST(NpyCompare, ZeroToleranceIsExact) {
  EXPECT_TRUE(matches(f32({1.5f, -2.0f}), f32({1.5f, -2.0f}), {}));
  EXPECT_FALSE(matches(f32({1.5f, std::nextafter(-2.0f, 0.0f)}), f32({1.5f, -2.0f}), {}));
}

TEST(NpyCompare, Float64ComparesInDouble) {
  // 1 + 5e-13 and 1 + 3e-12 are both 1.0f in float32; only double arithmetic tells them apart.
  const Tolerance tol{1e-12, 0.0};
  EXPECT_TRUE(matches(f64({1.0 + 5e-13}), f64({1.0}), tol));
  EXPECT_FALSE(matches(f64({1.0 + 3e-12}), f64({1.0}), tol));
}

TEST(NpyCompare, NaNMatchesOnlyNaN) {
  EXPECT_TRUE(matches(f32({kNaN}), f32({kNaN}), {}));
  EXPECT_FALSE(matches(f32({1.0f}), f32({kNaN}), {1.0, 1.0}));
  EXPECT_FALSE(matches(f32({kNaN}), f32({1.0f}), {1.0, 1.0}));
}

TEST(NpyCompare, InfinitiesMustBeEqual) {
  EXPECT_TRUE(matches(f32({kInf, -kInf}), f32({kInf, -kInf}), {}));
  EXPECT_FALSE(matches(f32({-kInf}), f32({kInf}), {1.0, 1.0}));
  EXPECT_FALSE(matches(f32({3e38f}), f32({kInf}), {1.0, 1e38}));
  EXPECT_FALSE(matches(f32({kInf}), f32({3e38f}), {1.0, 1e38}));
}

TEST(NpyCompare, IntegersAreExactWhateverTheTolerance) {
  const Tensor want = Tensor::from<std::int64_t>({2}, {4, 9});
  EXPECT_TRUE(matches(Tensor::from<std::int64_t>({2}, {4, 9}), want, {1.0, 10.0}));
  EXPECT_FALSE(matches(Tensor::from<std::int64_t>({2}, {4, 10}), want, {1.0, 10.0}));
  EXPECT_FALSE(matches(Tensor::from<std::int8_t>({1}, {-3}), Tensor::from<std::int8_t>({1}, {-2}),
                       {1.0, 10.0}));
}

TEST(NpyCompare, Float16ComparesInFloat32) {
  const Tensor want = Tensor::from<half>({1}, {half(2.0f)});
  EXPECT_TRUE(matches(Tensor::from<half>({1}, {half(2.001953125f)}), want, {0.0, 0.002}));
  EXPECT_FALSE(matches(Tensor::from<half>({1}, {half(2.00390625f)}), want, {0.0, 0.002}));
}

TEST(NpyCompare, DtypeAndShapeMustBeEqual) {
  EXPECT_NE(
      tensor_mismatch(f64({1.0}), f32({1.0f}), {1.0, 1.0}).find("dtype float64, want float32"),
      std::string::npos);
  const Tensor flat = f32({1, 2, 3, 4});
  EXPECT_NE(tensor_mismatch(flat.reshaped({2, 2}), flat, {1.0, 1.0}).find("shape [2, 2], want [4]"),
            std::string::npos);
}

TEST(NpyCompare, ReportNamesCountAndMultiIndex) {
  const Tensor want = Tensor::from<float>({2, 3}, {0, 1, 2, 3, 4, 5});
  const Tensor got = Tensor::from<float>({2, 3}, {0, 1, 2, 3, 4, 6});
  const std::string report = tensor_mismatch(got, want, {});
  EXPECT_NE(report.find("1 of 6 elements differ"), std::string::npos) << report;
  EXPECT_NE(report.find("at [1, 2]: got 6, want 5"), std::string::npos) << report;
}

}  // namespace
}  // namespace nodeflow::testing
