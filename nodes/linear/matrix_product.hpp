#pragma once
// The one matrix product of the layer nodes (Conv's im2col, Gemm, MatMul and
// their gradients): Eigen's product, built once per instruction set
// (nodes/linear/detail/product_*.cpp) and run with the best one the CPU has,
// its output split over the executor's threads.
#include <cstdint>

namespace nodeflow {

/// c = alpha * op(a) * op(b) + beta * c over dense row-major matrices, where
/// op(x) is x or its transpose. op(a) is m x k (a is stored k x m when
/// trans_a), op(b) is k x n (b is stored n x k when trans_b), c is m x n.
/// beta == 0 overwrites c without reading it. T is float or double.
///
/// Up to `threads` threads (parallel_ranges) each compute a block of rows or
/// columns of c; every element of c is a sum over k in one fixed order,
/// whatever the thread count, so the result does not depend on `threads`.
template <typename T>
void matrix_product(std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a, bool trans_a,
                    const T* b, bool trans_b, T beta, T* c, int threads = 1);

extern template void matrix_product<float>(std::int64_t, std::int64_t, std::int64_t, float, const float*,
                                           bool, const float*, bool, float, float*, int);
extern template void matrix_product<double>(std::int64_t, std::int64_t, std::int64_t, double,
                                            const double*, bool, const double*, bool, double, double*, int);

/// The instruction set matrix_product runs: "avx512", "avx2" or "portable".
const char* matrix_product_isa();

}  // namespace nodeflow
