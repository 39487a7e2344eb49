#include "nodes/linear/matrix_product.hpp"

#include <algorithm>

#include "core/parallel.hpp"
#include "nodes/linear/detail/product_kernel.hpp"

namespace nodeflow {
namespace {

enum class Isa { Portable, Avx2, Avx512 };

Isa detect_isa() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("fma"))
    return Isa::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::Avx2;
#endif
  return Isa::Portable;
}

Isa isa() {
  static const Isa chosen = detect_isa();
  return chosen;
}

template <typename T>
product::Kernel<T> kernel() {
  switch (isa()) {
    case Isa::Avx512:
      return product::avx512;
    case Isa::Avx2:
      return product::avx2;
    case Isa::Portable:
      break;
  }
  return product::portable;
}

// Below this many multiply-adds per thread a product runs on the calling
// thread: waking a second one costs more than it saves.
constexpr std::int64_t kMinWorkPerThread = std::int64_t{1} << 16;
// Blocks of rows or columns start at multiples of this many: a multiple of
// the rows and columns of every instruction set's register block (Eigen's
// gebp: 3 packets of rows, 48 floats with AVX-512), so each element is
// computed by the same code path, in the same order, as in one whole product.
constexpr std::int64_t kBlockAlign = 48;

}  // namespace

const char* matrix_product_isa() {
  switch (isa()) {
    case Isa::Avx512:
      return "avx512";
    case Isa::Avx2:
      return "avx2";
    case Isa::Portable:
      break;
  }
  return "portable";
}

template <typename T>
void matrix_product(std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a, bool trans_a,
                    const T* b, bool trans_b, T beta, T* c, int threads) {
  const product::Kernel<T> run = kernel<T>();
  const std::int64_t lda = trans_a ? m : k, ldb = trans_b ? k : n;
  // Split the longer side of c, so that each thread packs the smaller
  // operand again rather than the larger one; each block sums over all of k,
  // in the order a single thread would.
  const bool split_rows = m >= n;
  const std::int64_t side = split_rows ? m : n;
  const std::int64_t by_work = std::max<std::int64_t>(1, m * n * std::max<std::int64_t>(k, 1) / kMinWorkPerThread);
  const std::int64_t blocks =
      std::min({static_cast<std::int64_t>(std::max(1, threads)), by_work, (side + kBlockAlign - 1) / kBlockAlign});
  if (blocks <= 1) {
    run(m, n, k, alpha, a, lda, trans_a, b, ldb, trans_b, beta, c, n);
    return;
  }
  const std::int64_t units = (side + kBlockAlign - 1) / kBlockAlign;
  parallel_ranges(static_cast<int>(blocks), blocks, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t part = first; part < last; ++part) {
      const std::int64_t begin = std::min(side, units * part / blocks * kBlockAlign);
      const std::int64_t end = std::min(side, units * (part + 1) / blocks * kBlockAlign);
      if (begin >= end) continue;
      if (split_rows)  // rows [begin, end) of op(a) and c
        run(end - begin, n, k, alpha, trans_a ? a + begin : a + begin * lda, lda, trans_a, b, ldb, trans_b, beta,
            c + begin * n, n);
      else  // columns [begin, end) of op(b) and c
        run(m, end - begin, k, alpha, a, lda, trans_a, trans_b ? b + begin * ldb : b + begin, ldb, trans_b, beta,
            c + begin, n);
    }
  });
}

template void matrix_product<float>(std::int64_t, std::int64_t, std::int64_t, float, const float*, bool,
                                    const float*, bool, float, float*, int);
template void matrix_product<double>(std::int64_t, std::int64_t, std::int64_t, double, const double*, bool,
                                     const double*, bool, double, double*, int);

}  // namespace nodeflow
