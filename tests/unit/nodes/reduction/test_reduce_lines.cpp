// The reductions' row kernels (nodes/reduction/reduce_lines.hpp): sum_rows
// gives, bit for bit, the eight-lane order it documents, whatever the number
// of rows a call takes and for every tail length; so do sum and dot their
// blocks of eight sets of eight lanes, and scale_and_dot dot's while it writes
// its scaled run; divide gives each quotient; fill_rows writes each row's
// value, -0 and NaN included.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "nodes/reduction/reduce_lines.hpp"

namespace nodeflow {
namespace {

// The documented order, one element at a time.
template <typename T> T eight_lane_sum(const T* x, std::int64_t n) {
  T lane[8] = {};
  std::int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int l = 0; l < 8; ++l) lane[l] += x[j + l];
  T r = ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
  for (; j < n; ++j) r += x[j];
  return r;
}

template <typename T> bool bitwise_equal(T a, T b) { return std::memcmp(&a, &b, sizeof a) == 0; }

template <typename T> void check_sum_rows() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> value(-1e3, 1e3);
  for (const std::int64_t n : {0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 56, 57, 100}) {
    for (const std::int64_t rows : {1, 2, 3, 4, 5, 8, 9, 10, 19}) {
      std::vector<T> x(static_cast<std::size_t>(rows * n));
      for (T& v : x) v = static_cast<T>(value(rng));
      std::vector<T> y(static_cast<std::size_t>(rows), T(-1));
      reduce_lines::sum_rows(x.data(), y.data(), rows, n);
      for (std::int64_t r = 0; r < rows; ++r)
        ASSERT_TRUE(bitwise_equal(y[static_cast<std::size_t>(r)], eight_lane_sum(x.data() + r * n, n)))
            << "n " << n << ", rows " << rows << ", row " << r;
    }
  }
}

TEST(ReduceLines, SumRowsKeepsTheEightLaneOrderFloat) { check_sum_rows<float>(); }
TEST(ReduceLines, SumRowsKeepsTheEightLaneOrderDouble) { check_sum_rows<double>(); }

// sum's documented order, one element at a time: one block.
template <typename T> T eight_set_block(const T* x, std::int64_t n) {
  T lane[8][8] = {};
  std::int64_t j = 0;
  for (; j + 64 <= n; j += 64)
    for (int s = 0; s < 8; ++s)
      for (int l = 0; l < 8; ++l) lane[s][l] += x[j + 8 * s + l];
  for (int s = 0; j + 8 <= n; j += 8, ++s)
    for (int l = 0; l < 8; ++l) lane[s][l] += x[j + l];
  T joined[8];
  for (int l = 0; l < 8; ++l)
    joined[l] = ((lane[0][l] + lane[1][l]) + (lane[2][l] + lane[3][l])) +
                ((lane[4][l] + lane[5][l]) + (lane[6][l] + lane[7][l]));
  T r = ((joined[0] + joined[4]) + (joined[2] + joined[6])) + ((joined[1] + joined[5]) + (joined[3] + joined[7]));
  for (; j < n; ++j) r += x[j];
  return r;
}

// The blocks' sums added in turn to 0.
template <typename T> T eight_set_sum(const T* x, std::int64_t n) {
  T total = 0;
  for (std::int64_t b = 0; b < n; b += reduce_lines::kSumBlock)
    total += eight_set_block(x + b, std::min(reduce_lines::kSumBlock, n - b));
  return total;
}

template <typename T> void check_sum() {
  std::mt19937 rng(8);
  std::uniform_real_distribution<double> value(-1e3, 1e3);
  for (const std::int64_t n : {0, 1, 7, 8, 9, 56, 63, 64, 65, 71, 72, 127, 128, 129, 1023, 1024, 1025, 1031, 2048,
                               3136, 3137, 3199}) {
    std::vector<T> x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n)), xy(static_cast<std::size_t>(n));
    for (T& v : x) v = static_cast<T>(value(rng));
    for (T& v : y) v = static_cast<T>(value(rng));
    for (std::size_t j = 0; j < xy.size(); ++j) xy[j] = x[j] * y[j];
    ASSERT_TRUE(bitwise_equal(reduce_lines::sum(x.data(), n), eight_set_sum(x.data(), n))) << "n " << n;
    ASSERT_TRUE(bitwise_equal(reduce_lines::dot(x.data(), y.data(), n), eight_set_sum(xy.data(), n))) << "n " << n;
  }
}

TEST(ReduceLines, SumAndDotKeepTheEightSetOrderFloat) { check_sum<float>(); }
TEST(ReduceLines, SumAndDotKeepTheEightSetOrderDouble) { check_sum<double>(); }

// scale_and_dot: dot's bits, and d written as the scalar loop writes it,
// assigned or added into, for every tail length.
template <typename T> void check_scale_and_dot() {
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> value(-1e3, 1e3);
  const T k = static_cast<T>(0.37), b = static_cast<T>(-1.9);
  for (const std::int64_t n : {0, 1, 7, 8, 9, 63, 64, 65, 1023, 1024, 1025, 3136, 3137}) {
    const auto size = static_cast<std::size_t>(n);
    std::vector<T> g(size), x(size), d0(size);
    for (T& v : g) v = static_cast<T>(value(rng));
    for (T& v : x) v = static_cast<T>(value(rng));
    for (T& v : d0) v = static_cast<T>(value(rng));
    for (const bool assign : {true, false}) {
      std::vector<T> d = d0, want = d0;
      for (std::size_t j = 0; j < size; ++j) want[j] = assign ? k * (g[j] * b) : want[j] + k * (g[j] * b);
      const T r = reduce_lines::scale_and_dot(d.data(), assign, k, b, g.data(), x.data(), n);
      ASSERT_TRUE(bitwise_equal(r, reduce_lines::dot(g.data(), x.data(), n))) << "n " << n;
      // memcmp of an empty vector would pass it a null pointer.
      ASSERT_TRUE(size == 0 || std::memcmp(d.data(), want.data(), size * sizeof(T)) == 0)
          << "n " << n << " assign " << assign;
    }
  }
}

TEST(ReduceLines, ScaleAndDotWritesTheScaledRunAndReturnsDotsBitsFloat) { check_scale_and_dot<float>(); }
TEST(ReduceLines, ScaleAndDotWritesTheScaledRunAndReturnsDotsBitsDouble) { check_scale_and_dot<double>(); }

template <typename T> void check_divide() {
  std::mt19937 rng(10);
  std::uniform_real_distribution<double> value(-1e3, 1e3);
  for (const T d : {T(56), T(3), T(-7), T(0)}) {
    for (const std::int64_t n : {0, 1, 7, 15, 16, 17, 56, 57, 100}) {
      const auto size = static_cast<std::size_t>(n);
      std::vector<T> y(size);
      for (T& v : y) v = static_cast<T>(value(rng));
      std::vector<T> want = y;
      for (T& v : want) v = v / d;
      reduce_lines::divide(y.data(), d, n);
      for (std::size_t j = 0; j < size; ++j)
        ASSERT_TRUE(bitwise_equal(y[j], want[j])) << "n " << n << " d " << d << " j " << j;
    }
  }
}

TEST(ReduceLines, DivideGivesEachQuotientsBitsFloat) { check_divide<float>(); }
TEST(ReduceLines, DivideGivesEachQuotientsBitsDouble) { check_divide<double>(); }

TEST(ReduceLines, FillRowsWritesEveryElementOfEachRow) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> values{-0.0f, 2.5f, nan};
  for (const std::int64_t n : {1, 7, 8, 16, 23, 56}) {
    std::vector<float> x(static_cast<std::size_t>(3 * n), 9.0f);
    reduce_lines::fill_rows(x.data(), values.data(), 3, n);
    for (std::int64_t j = 0; j < n; ++j) {
      EXPECT_TRUE(std::signbit(x[static_cast<std::size_t>(j)]) && x[static_cast<std::size_t>(j)] == 0.0f) << n;
      EXPECT_EQ(x[static_cast<std::size_t>(n + j)], 2.5f) << n;
      EXPECT_TRUE(std::isnan(x[static_cast<std::size_t>(2 * n + j)])) << n;
    }
  }
}

}  // namespace
}  // namespace nodeflow
