// ArgMax (ONNX ArgMax-13): first or last of equal maxima, keepdims, negative
// axes, NaN as the largest value, the integer dtypes, large tensors with 1
// and 2 threads against the oracle's slices, and its refusals.
#include <gtest/gtest.h>

#include <limits>

#include "core/errors.hpp"
#include "reduce_reference.hpp"
#include "support/error_of.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::error_of;
using testing::f64;

Tensor argmax(const Tensor& x, const Attributes& attrs, int threads = 1) {
  return testing::run_reduction("ArgMax", {x}, attrs, threads);
}

std::vector<std::int64_t> indices(const Tensor& t) { return testing::int64_values(t); }

Attributes attrs(std::int64_t axis, std::int64_t keepdims = 1, std::int64_t last = 0) {
  return {{"axis", axis}, {"keepdims", keepdims}, {"select_last_index", last}};
}

TEST(ArgMax, FirstOrLastOfEqualMaxima) {
  const Tensor x = f64({2, 4}, {1, 5, 5, 2, 7, 7, 7, 7});
  EXPECT_EQ(indices(argmax(x, attrs(1))), (std::vector<std::int64_t>{1, 0}));
  EXPECT_EQ(indices(argmax(x, attrs(1, 1, 1))), (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(argmax(x, attrs(1)).shape(), (Shape{2, 1}));
  EXPECT_EQ(argmax(x, attrs(-1, 0)).shape(), (Shape{2}));
  // Along axis 0 (the line-kept path): column by column.
  EXPECT_EQ(indices(argmax(x, attrs(0, 0))), (std::vector<std::int64_t>{1, 1, 1, 1}));
  const Tensor ties = f64({3, 2}, {4, 1, 4, 1, 0, 1});
  EXPECT_EQ(indices(argmax(ties, attrs(0, 0))), (std::vector<std::int64_t>{0, 0}));
  EXPECT_EQ(indices(argmax(ties, attrs(0, 0, 1))), (std::vector<std::int64_t>{1, 2}));
}

TEST(ArgMax, NaNIsTheLargest) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = f64({1, 5}, {1, nan, 9, nan, 2});
  EXPECT_EQ(indices(argmax(x, attrs(1))), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(indices(argmax(x, attrs(1, 1, 1))), (std::vector<std::int64_t>{3}));
  EXPECT_EQ(indices(argmax(x.reshaped({5, 1}), attrs(0))), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(indices(argmax(x.reshaped({5, 1}), attrs(0, 1, 1))), (std::vector<std::int64_t>{3}));
}

TEST(ArgMax, EveryDtype) {
  const Tensor x = f64({2, 3}, {-3, 8, 8, 1, 0, 2});
  for (DType dtype : {DType::Float32, DType::Float16, DType::BFloat16, DType::Int8, DType::Int64}) {
    EXPECT_EQ(indices(argmax(x.cast(dtype), attrs(1, 0, 1))), (std::vector<std::int64_t>{2, 2})) << dtype_name(dtype);
  }
  const Tensor u8 = Tensor::from<std::uint8_t>({3}, {200, 255, 3});
  EXPECT_EQ(indices(argmax(u8, attrs(0))), (std::vector<std::int64_t>{1}));
}

TEST(ArgMax, LargeTensorsMatchTheOracleWithTwoThreads) {
  std::mt19937_64 rng(2);
  const Shape shape{6, 37, 5, 41};
  // Values from a small set: many ties.
  std::vector<double> v(static_cast<std::size_t>(element_count(shape)));
  for (double& e : v) e = static_cast<double>(rng() % 7);
  const Tensor x = Tensor::from<double>(shape, v);
  for (std::int64_t axis = 0; axis < 4; ++axis)
    for (std::int64_t last : {0, 1}) {
      std::vector<bool> reduced(4, false);
      reduced[static_cast<std::size_t>(axis)] = true;
      std::vector<std::int64_t> want;
      for (const auto& slice : testing::reduced_slices(shape, reduced)) {
        std::size_t best = 0;
        for (std::size_t j = 1; j < slice.size(); ++j) {
          const double a = v[static_cast<std::size_t>(slice[j])], b = v[static_cast<std::size_t>(slice[best])];
          if (last ? a >= b : a > b) best = j;
        }
        want.push_back(static_cast<std::int64_t>(best));
      }
      for (int threads : {1, 2})
        EXPECT_EQ(indices(argmax(x, attrs(axis, 1, last), threads)), want) << "axis " << axis << " last " << last;
    }
}

TEST(ArgMax, RefusesScalarsAndEmptyAxes) {
  EXPECT_EQ(error_of<ShapeMismatch>([] { argmax(Tensor::from<double>({}, {1.0}), attrs(0)); }),
            "ArgMax needs an input of rank >= 1, got a scalar");
  EXPECT_EQ(error_of<ShapeMismatch>([] { argmax(Tensor(DType::Float32, {2, 0}), attrs(1)); }),
            "ArgMax along axis 1 of input [2, 0]: the axis is empty, there is no maximum");
  EXPECT_EQ(argmax(Tensor(DType::Float32, {0, 3}), attrs(1)).shape(), (Shape{0, 1}));
}

TEST(ArgMax, BackwardGivesNothing) {
  auto node = testing::make_node("ArgMax", attrs(0));
  const Tensor x = f64({2}, {1, 2});
  const auto f = testing::run_forward(*node, {x});
  std::vector<Tensor> grads{f64({2}, {5, 6})};
  testing::run_backward(*node, {x}, f, {Tensor()}, grads);
  EXPECT_EQ(testing::as_doubles(grads[0]), (std::vector<double>{5, 6}));
}

}  // namespace
}  // namespace nodeflow
