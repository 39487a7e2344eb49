// The elementwise gradients' loops (nodes/elementwise/gradient_lanes.hpp)
// give a scalar loop's bits at every tail length, whatever vector width the
// CPU picks: copy_to_two copies, write_products computes k * (g * x),
// assigned or added into each gradient, both added into one buffer in turn
// when the two are one (Mul(t, t)).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "nodes/elementwise/gradient_lanes.hpp"

namespace nodeflow {
namespace {

constexpr std::int64_t kLengths[] = {0, 1, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 1023, 4096, 4097};

template <typename T> std::vector<T> random_values(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> value(-1e3, 1e3);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(value(rng));
  return v;
}

// memcmp of an empty vector would pass it a null pointer.
template <typename T> bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

template <typename T> void check_copy_to_two() {
  std::mt19937 rng(11);
  for (const std::int64_t n : kLengths) {
    const auto size = static_cast<std::size_t>(n);
    const std::vector<T> s = random_values<T>(size, rng);
    std::vector<T> d0(size, T(7)), d1(size, T(-7));
    gradient_lanes::copy_to_two(d0.data(), d1.data(), s.data(), n);
    ASSERT_TRUE(same_bits(d0, s) && same_bits(d1, s)) << "n " << n;
  }
}

TEST(GradientLanes, CopyToTwoCopiesEveryElementFloat) { check_copy_to_two<float>(); }
TEST(GradientLanes, CopyToTwoCopiesEveryElementDouble) { check_copy_to_two<double>(); }

template <typename T> void check_write_products() {
  std::mt19937 rng(12);
  const T k0 = static_cast<T>(0.37), k1 = static_cast<T>(-1.9);
  for (const std::int64_t n : kLengths) {
    const auto size = static_cast<std::size_t>(n);
    const std::vector<T> g = random_values<T>(size, rng), a = random_values<T>(size, rng),
                         b = random_values<T>(size, rng), start = random_values<T>(size, rng);
    for (const bool assign0 : {true, false}) {
      for (const bool assign1 : {true, false}) {
        std::vector<T> d0 = start, d1 = start, want0 = start, want1 = start;
        for (std::size_t j = 0; j < size; ++j) {
          const T v0 = k0 * (g[j] * b[j]), v1 = k1 * (g[j] * a[j]);
          want0[j] = assign0 ? v0 : want0[j] + v0;
          want1[j] = assign1 ? v1 : want1[j] + v1;
        }
        using Product = gradient_lanes::Product<T>;
        gradient_lanes::write_products(Product{d0.data(), k0, b.data(), assign0},
                                       Product{d1.data(), k1, a.data(), assign1}, g.data(), n);
        ASSERT_TRUE(same_bits(d0, want0) && same_bits(d1, want1))
            << "n " << n << " assign " << assign0 << assign1;
      }
    }
    // Mul(t, t): one buffer, both products added in turn.
    std::vector<T> d = start, want = start;
    for (std::size_t j = 0; j < size; ++j) want[j] = (want[j] + k0 * (g[j] * a[j])) + k1 * (g[j] * a[j]);
    gradient_lanes::write_products(gradient_lanes::Product<T>{d.data(), k0, a.data(), false},
                                   gradient_lanes::Product<T>{d.data(), k1, a.data(), false}, g.data(), n);
    ASSERT_TRUE(same_bits(d, want)) << "one buffer, n " << n;
  }
}

TEST(GradientLanes, WriteProductsGivesTheScalarLoopsBitsFloat) { check_write_products<float>(); }
TEST(GradientLanes, WriteProductsGivesTheScalarLoopsBitsDouble) { check_write_products<double>(); }

}  // namespace
}  // namespace nodeflow
