// Reduce* forward values: a seeded sweep of shapes, axes and keepdims against
// the float64 oracle (reduce_reference.hpp) for every op, with 1 and 2
// threads; float16/bfloat16 (accumulated in float32), the integer dtypes
// (wrapping sums, truncating means, saturating L2), noop_with_empty_axes,
// rank 0, empty reductions, NaN and LogSumExp on large inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/errors.hpp"
#include "nodes/reduction/reduce_axes.hpp"
#include "reduce_reference.hpp"
#include "support/error_of.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::error_of;
using testing::i64;
using testing::make_node;
using testing::run_forward;

Tensor reduce(const std::string& op, const std::vector<Tensor>& inputs, const Attributes& attrs = {},
              int threads = 1) {
  return testing::run_reduction(op, inputs, attrs, threads);
}

// The oracle's values for x (any float dtype) reduced as the case says.
std::vector<double> expected(const std::string& op, const Tensor& x, const testing::ReduceCase& rc) {
  const std::vector<double> v = as_doubles(x);
  std::vector<double> want;
  for (const auto& slice : testing::reduced_slices(rc.shape, rc.reduced)) {
    std::vector<double> values;
    for (std::int64_t i : slice) values.push_back(v[static_cast<std::size_t>(i)]);
    want.push_back(testing::reference_reduce(op, values));
  }
  return want;
}

void check_case(const std::string& op, const testing::ReduceCase& rc, DType dtype, double tol, int threads,
                std::mt19937_64& rng) {
  SCOPED_TRACE(op + ", " + testing::describe(rc) + ", " + std::string(dtype_name(dtype)));
  // Values in [0.5, 1.5] keep products and norms well conditioned.
  Tensor x = testing::random_uniform(rc.shape, rng, 0.5);
  for (double& e : x.values<double>()) e += 1.0;
  const Tensor xd = x.cast(dtype);
  const Tensor y = reduce(op, testing::reduce_inputs(xd, rc), {{"keepdims", std::int64_t{rc.keepdims}}}, threads);
  ASSERT_EQ(y.dtype(), dtype);
  EXPECT_EQ(y.shape(), reduced_shape(rc.shape, rc.reduced, rc.keepdims));
  const std::vector<double> want = expected(op, xd, rc);
  const std::vector<double> got = as_doubles(y);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << i;
}

TEST(ReduceValues, SweepMatchesTheOracleInFloat64) {
  std::mt19937_64 rng(11);
  for (const auto& op : testing::reduce_ops())
    for (const auto& rc : testing::reduce_sweep(3, 60)) check_case(op, rc, DType::Float64, 1e-13, 1, rng);
}

TEST(ReduceValues, LargeTensorsAgreeWithOneAndTwoThreads) {
  std::mt19937_64 rng(5);
  // [300, 2, 70] over axis 0: 300 lines per output row, more than one group.
  for (const Shape& shape : {Shape{4, 64, 12, 14}, Shape{300, 2, 70}})
    for (const auto& op : testing::reduce_ops())
      for (std::vector<std::int64_t> axes : {std::vector<std::int64_t>{0}, {1}, {-1}, {0, 2}, {}}) {
        testing::ReduceCase rc;
        rc.shape = shape;
        rc.axes = axes;
        rc.reduced = reduced_axes(axes, shape.size(), false);
        for (int threads : {1, 2}) check_case(op, rc, DType::Float32, 2e-5, threads, rng);
      }
}

TEST(ReduceValues, LongFloat32SumsKeepTheirPrecision) {
  // 0.1f added one by one a million times drifts by 1%; the grouped and
  // pairwise sums stay within a few dozen roundings (the sequential sums of
  // one group of lines, or of one piece of a line).
  const double tenth = static_cast<double>(0.1f);
  const Tensor x = Tensor::from<float>({1000000, 2}, std::vector<float>(2000000, 0.1f));
  for (int threads : {1, 2}) {
    for (const double v : as_doubles(reduce("ReduceSum", {x, i64({1}, {0})}, {}, threads)))
      EXPECT_NEAR(v, 1e6 * tenth, 1e6 * tenth * 4e-6);
    for (const double v : as_doubles(reduce("ReduceSum", {x.reshaped({2, 1000000}), i64({1}, {1})}, {}, threads)))
      EXPECT_NEAR(v, 1e6 * tenth, 1e6 * tenth * 1e-6);
  }
}

TEST(ReduceValues, HalfPrecisionAccumulatesInFloat32) {
  std::mt19937_64 rng(9);
  for (const auto& op : testing::reduce_ops())
    for (const auto& rc : testing::reduce_sweep(4, 20)) {
      check_case(op, rc, DType::Float16, 2e-3, 1, rng);
      check_case(op, rc, DType::BFloat16, 1.6e-2, 1, rng);
    }
  // 4096 ones: a float16 accumulator would stop at 2048.
  const Tensor ones = Tensor::from<double>({4096}, std::vector<double>(4096, 1.0)).cast(DType::Float16);
  EXPECT_EQ(as_doubles(reduce("ReduceSum", {ones})), (std::vector<double>{4096}));
}

TEST(ReduceValues, NoopWithEmptyAxesOnlyMapsTheElements) {
  const Tensor x = testing::f64({2, 2}, {-1.5, 2, 0, 3});
  const Tensor none = Tensor(DType::Int64, {0});
  const Attributes noop{{"noop_with_empty_axes", std::int64_t{1}}};
  EXPECT_EQ(as_doubles(reduce("ReduceSum", {x}, noop)), (std::vector<double>{-1.5, 2, 0, 3}));
  EXPECT_EQ(as_doubles(reduce("ReduceSumSquare", {x, none}, noop)), (std::vector<double>{2.25, 4, 0, 9}));
  EXPECT_EQ(as_doubles(reduce("ReduceL2", {x}, noop)), (std::vector<double>{1.5, 2, 0, 3}));
  EXPECT_EQ(reduce("ReduceMean", {x, none}, noop).shape(), (Shape{2, 2}));
  // Without noop, empty axes reduce everything.
  EXPECT_EQ(as_doubles(reduce("ReduceSum", {x, none})), (std::vector<double>{3.5}));
  EXPECT_EQ(reduce("ReduceSum", {x, none}).shape(), (Shape{1, 1}));
}

// float32 norms whose sum of squares overflowed or is subnormal: +inf and
// the square root of the subnormal, for every output (vector loops too).
TEST(ReduceValues, L2OfOverflowedAndSubnormalSumsInFloat32) {
  const float big = 3e38f, small = 1e-21f;
  std::vector<float> values;
  for (int r = 0; r < 16; ++r) values.insert(values.end(), {r % 2 ? big : small, r % 2 ? big : 0.0f});
  const Tensor x = Tensor::from<float>({16, 2}, values);
  const std::vector<double> norms = as_doubles(reduce("ReduceL2", {x, i64({1}, {1})}));
  ASSERT_EQ(norms.size(), 16u);
  for (std::size_t r = 0; r < norms.size(); ++r)
    EXPECT_EQ(norms[r], r % 2 ? std::numeric_limits<double>::infinity() : static_cast<double>(std::sqrt(small * small)))
        << r;
}

TEST(ReduceValues, RankZeroInputsAndOutputs) {
  const Tensor s = Tensor::from<double>({}, {-2.0});
  EXPECT_EQ(reduce("ReduceSumSquare", {s}).shape(), Shape{});
  EXPECT_EQ(as_doubles(reduce("ReduceSumSquare", {s})), (std::vector<double>{4}));
  EXPECT_EQ(as_doubles(reduce("ReduceLogSumExp", {s}, {{"keepdims", std::int64_t{0}}})), (std::vector<double>{-2}));
  const Tensor y = reduce("ReduceMin", {testing::f64({2, 3}, {4, 1, 5, 9, 2, 6})}, {{"keepdims", std::int64_t{0}}});
  EXPECT_EQ(y.shape(), Shape{});
  EXPECT_EQ(as_doubles(y), (std::vector<double>{1}));
}

TEST(ReduceValues, EmptyReductionsGiveTheIdentity) {
  const Tensor x(DType::Float32, {2, 0, 3});
  const Tensor axis1 = i64({1}, {1});
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<std::pair<std::string, double>> want{
      {"ReduceSum", 0}, {"ReduceSumSquare", 0}, {"ReduceL2", 0},          {"ReduceProd", 1},
      {"ReduceMax", -inf}, {"ReduceMin", inf},  {"ReduceLogSumExp", -inf}};
  for (const auto& [op, value] : want) {
    const Tensor y = reduce(op, {x, axis1});
    EXPECT_EQ(y.shape(), (Shape{2, 1, 3})) << op;
    EXPECT_EQ(as_doubles(y), std::vector<double>(6, value)) << op;
  }
  EXPECT_TRUE(std::isnan(as_doubles(reduce("ReduceMean", {x, axis1}))[0]));
  // Kept axes of length 0: no output at all.
  EXPECT_EQ(reduce("ReduceSum", {x, i64({1}, {2})}).shape(), (Shape{2, 0, 1}));
}

TEST(ReduceValues, NaNPropagatesThroughMaxAndMin) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int threads : {1, 2}) {
    const Tensor x = testing::f64({2, 3}, {1, nan, 3, nan, 5, -1});
    for (const std::string op : {"ReduceMax", "ReduceMin"}) {
      const auto rows = as_doubles(reduce(op, {x, i64({1}, {1})}, {}, threads));
      EXPECT_TRUE(std::isnan(rows[0]) && std::isnan(rows[1])) << op;
      const auto cols = as_doubles(reduce(op, {x, i64({1}, {0})}, {}, threads));
      EXPECT_TRUE(std::isnan(cols[0]) && std::isnan(cols[1]) && !std::isnan(cols[2])) << op;
    }
  }
}

TEST(ReduceValues, LogSumExpIsFiniteForLargeInputs) {
  // Near each dtype's largest values exp overflows; the result must not. The
  // tolerance is about a unit in the last place of the result.
  struct Large {
    DType dtype;
    double value, tol;
  };
  for (const Large& c : {Large{DType::Float64, 1e300, 1e285}, Large{DType::Float32, 3e38, 3e32},
                         Large{DType::Float16, 6e4, 32}, Large{DType::BFloat16, 3e38, 2e36}}) {
    const Tensor x = testing::f64({2, 2}, {c.value, c.value, -c.value, -c.value}).cast(c.dtype);
    const double v = as_doubles(x)[0];
    const auto y = as_doubles(reduce("ReduceLogSumExp", {x, i64({1}, {1})}));
    EXPECT_NEAR(y[0], v + std::log(2.0), c.tol) << dtype_name(c.dtype);
    EXPECT_NEAR(y[1], -v + std::log(2.0), c.tol) << dtype_name(c.dtype);
  }
  // 1e4 in float32: log 2 must survive next to the maximum.
  const auto y32 = as_doubles(reduce("ReduceLogSumExp", {testing::f64({2}, {1e4, 1e4}).cast(DType::Float32)}));
  EXPECT_NEAR(y32[0], 1e4 + std::log(2.0), 1e-3);
  const double inf = std::numeric_limits<double>::infinity();
  const auto y = as_doubles(reduce("ReduceLogSumExp", {testing::f64({2, 2}, {inf, 1, -inf, -inf}), i64({1}, {1})}));
  EXPECT_EQ(y[0], inf);
  EXPECT_EQ(y[1], -inf);
}

TEST(ReduceValues, Int64WrapsTruncatesAndSaturates) {
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  const auto ints = testing::int64_values;
  const Tensor x = i64({2, 3}, {big, 1, 0, -7, 2, -2});
  const Tensor axis1 = i64({1}, {1});
  EXPECT_EQ(ints(reduce("ReduceSum", {x, axis1})), (std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min(), -7}));
  EXPECT_EQ(ints(reduce("ReduceMean", {i64({2, 2}, {-7, 0, 7, 0}), axis1})), (std::vector<std::int64_t>{-3, 3}));
  EXPECT_EQ(ints(reduce("ReduceProd", {x, axis1})), (std::vector<std::int64_t>{0, 28}));
  EXPECT_EQ(ints(reduce("ReduceMax", {x, axis1})), (std::vector<std::int64_t>{big, 2}));
  EXPECT_EQ(ints(reduce("ReduceMin", {x, axis1})), (std::vector<std::int64_t>{0, -7}));
  EXPECT_EQ(ints(reduce("ReduceSumSquare", {i64({1, 2}, {-3, 4}), axis1})), (std::vector<std::int64_t>{25}));
  EXPECT_EQ(ints(reduce("ReduceL2", {i64({1, 2}, {-3, 4}), axis1})), (std::vector<std::int64_t>{5}));
  EXPECT_EQ(ints(reduce("ReduceL2", {x, axis1})), (std::vector<std::int64_t>{big, 7}));
  EXPECT_EQ(ints(reduce("ReduceLogSumExp", {i64({1, 2}, {3, 3}), axis1})), (std::vector<std::int64_t>{3}));
}

TEST(ReduceValues, SmallIntegersForMaxAndMinOnly) {
  const Tensor s8 = Tensor::from<std::int8_t>({2, 2}, {-128, 127, 5, -6});
  const Tensor u8 = Tensor::from<std::uint8_t>({2, 2}, {0, 255, 7, 3});
  const Tensor axis1 = i64({1}, {1});
  const Tensor s8y = reduce("ReduceMax", {s8, axis1});
  const auto s8max = s8y.values<std::int8_t>();
  EXPECT_EQ(std::vector<int>(s8max.begin(), s8max.end()), (std::vector<int>{127, 5}));
  const Tensor u8y = reduce("ReduceMin", {u8, axis1});
  const auto u8min = u8y.values<std::uint8_t>();
  EXPECT_EQ(std::vector<int>(u8min.begin(), u8min.end()), (std::vector<int>{0, 3}));
  const Tensor empty8(DType::UInt8, {2, 0});
  EXPECT_EQ(reduce("ReduceMax", {empty8, axis1}).values<std::uint8_t>()[0], 0);
  EXPECT_EQ(reduce("ReduceMin", {empty8, axis1}).values<std::uint8_t>()[0], 255);
  EXPECT_EQ(error_of<UnsupportedDType>([&] { reduce("ReduceSum", {s8, axis1}); }),
            "ReduceSum does not take dtype int8 (input 0 (data); allowed: float32, float64, float16, bfloat16, int64)");
  EXPECT_EQ(error_of<UnsupportedDType>([&] { reduce("ReduceMean", {u8, axis1}); }),
            "ReduceMean does not take dtype uint8 (input 0 (data); allowed: float32, float64, float16, bfloat16, "
            "int64)");
}

}  // namespace
}  // namespace nodeflow
