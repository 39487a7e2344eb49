// matrix_product (nodes/linear/matrix_product.hpp): each instruction set's
// kernel the CPU runs against a naive double loop over every transposition,
// beta and awkward sizes (register-block edges, k = 0, row strides of a block
// of a larger matrix); the threaded split against one thread, bit for bit.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "nodes/linear/detail/product_kernel.hpp"
#include "nodes/linear/matrix_product.hpp"

namespace nodeflow {
namespace {

struct Sizes {
  std::int64_t m, n, k;
};

// c = alpha * op(a) * op(b) + beta * c in double, with the row strides given.
template <typename T>
std::vector<double> naive(const Sizes& s, double alpha, const std::vector<T>& a, std::int64_t lda, bool ta,
                          const std::vector<T>& b, std::int64_t ldb, bool tb, double beta,
                          const std::vector<T>& c, std::int64_t ldc) {
  std::vector<double> out(c.begin(), c.end());
  for (std::int64_t i = 0; i < s.m; ++i)
    for (std::int64_t j = 0; j < s.n; ++j) {
      double sum = 0;
      for (std::int64_t p = 0; p < s.k; ++p)
        sum += static_cast<double>(ta ? a[p * lda + i] : a[i * lda + p]) *
               static_cast<double>(tb ? b[j * ldb + p] : b[p * ldb + j]);
      const std::size_t at = static_cast<std::size_t>(i * ldc + j);
      out[at] = alpha * sum + (beta == 0 ? 0.0 : beta * static_cast<double>(c[at]));
    }
  return out;
}

template <typename T>
std::vector<T> random_values(std::size_t count, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> v(count);
  for (T& x : v) x = static_cast<T>(u(rng));
  return v;
}

template <typename T>
void check_kernel(const char* name, product::Kernel<T> kernel, double tolerance) {
  std::mt19937_64 rng(5);
  const std::vector<Sizes> sizes = {{1, 1, 1}, {3, 5, 7}, {17, 9, 33}, {49, 13, 300}, {8, 97, 5}, {4, 6, 0}};
  for (const Sizes& s : sizes)
    for (int t = 0; t < 4; ++t)
      for (const double beta : {0.0, 1.0, -0.5}) {
        const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
        // Each matrix is a block of a wider one: its row stride exceeds its width.
        const std::int64_t lda = (ta ? s.m : s.k) + 3, ldb = (tb ? s.k : s.n) + 2, ldc = s.n + 1;
        const auto a = random_values<T>(static_cast<std::size_t>((ta ? s.k : s.m) * lda), rng);
        const auto b = random_values<T>(static_cast<std::size_t>((tb ? s.n : s.k) * ldb), rng);
        auto c = random_values<T>(static_cast<std::size_t>(s.m * ldc), rng);
        const auto want = naive(s, 0.75, a, lda, ta, b, ldb, tb, beta, c, ldc);
        kernel(s.m, s.n, s.k, T(0.75), a.data(), lda, ta, b.data(), ldb, tb, static_cast<T>(beta), c.data(), ldc);
        for (std::size_t i = 0; i < c.size(); ++i)
          ASSERT_NEAR(static_cast<double>(c[i]), want[i], tolerance)
              << name << " m " << s.m << " n " << s.n << " k " << s.k << " transA " << ta << " transB " << tb
              << " beta " << beta << " at " << i;
      }
}

template <typename T>
void check_every_kernel(double tolerance) {
  check_kernel<T>("portable", product::portable, tolerance);
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    check_kernel<T>("avx2", product::avx2, tolerance);
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("fma"))
    check_kernel<T>("avx512", product::avx512, tolerance);
#endif
}

TEST(MatrixProduct, EveryInstructionSetMatchesANaiveLoop) {
  check_every_kernel<float>(1e-4);
  check_every_kernel<double>(1e-12);
  const std::string isa = matrix_product_isa();
  EXPECT_TRUE(isa == "avx512" || isa == "avx2" || isa == "portable") << isa;
}

// Large enough to be split (rows when m >= n, else columns), with sizes that
// leave partial register blocks at the split points.
TEST(MatrixProduct, ThreadsSplitTheOutputWithoutChangingIt) {
  std::mt19937_64 rng(9);
  for (const Sizes s : {Sizes{301, 67, 129}, Sizes{45, 517, 77}, Sizes{130, 130, 600}})
    for (int t = 0; t < 4; ++t) {
      const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
      const auto a = random_values<float>(static_cast<std::size_t>(s.m * s.k), rng);
      const auto b = random_values<float>(static_cast<std::size_t>(s.k * s.n), rng);
      const auto c0 = random_values<float>(static_cast<std::size_t>(s.m * s.n), rng);
      std::vector<float> one = c0, two = c0, three = c0;
      matrix_product<float>(s.m, s.n, s.k, 1.5f, a.data(), ta, b.data(), tb, 1.0f, one.data(), 1);
      matrix_product<float>(s.m, s.n, s.k, 1.5f, a.data(), ta, b.data(), tb, 1.0f, two.data(), 2);
      matrix_product<float>(s.m, s.n, s.k, 1.5f, a.data(), ta, b.data(), tb, 1.0f, three.data(), 3);
      EXPECT_EQ(one, two) << s.m << "x" << s.n << "x" << s.k << " transA " << ta << " transB " << tb;
      EXPECT_EQ(one, three) << s.m << "x" << s.n << "x" << s.k << " transA " << ta << " transB " << tb;
      const auto want = naive(s, 1.5, a, ta ? s.m : s.k, ta, b, tb ? s.k : s.n, tb, 1.0, c0, s.n);
      for (std::size_t i = 0; i < one.size(); ++i) ASSERT_NEAR(one[i], want[i], 1e-3) << i;
    }
}

}  // namespace
}  // namespace nodeflow
