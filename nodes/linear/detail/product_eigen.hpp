#pragma once
// The body of product_portable.cpp, product_avx2.cpp and product_avx512.cpp:
// Eigen's product over row-major maps. Each of those files first defines
// NODEFLOW_PRODUCT_NAME (the function's name) and renames the namespace Eigen
// (`#define Eigen ...`): Eigen's templates are inline functions, and built
// with different instruction sets under one name the linker would keep one
// of them for every caller (an AVX-512 body on a CPU without it, or the
// reverse). Under its own name each set's instantiations stay apart.
#if defined(EIGEN_CORE_H) || defined(EIGEN_CORE_MODULE_H)
#error "Eigen was included before the namespace rename of this file"
#endif
#include <Eigen/Core>

#include "nodes/linear/detail/product_kernel.hpp"

namespace nodeflow::product {
namespace {

template <typename T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ConstMap = Eigen::Map<const RowMatrix<T>, Eigen::Unaligned, Eigen::OuterStride<>>;
template <typename T>
using Map = Eigen::Map<RowMatrix<T>, Eigen::Unaligned, Eigen::OuterStride<>>;

template <typename T, typename A, typename B>
void assign(Map<T>& c, T alpha, const A& a, const B& b, T beta) {
  if (beta == T(0)) {
    c.noalias() = alpha * a * b;
  } else {
    if (beta != T(1)) c *= beta;
    c.noalias() += alpha * a * b;
  }
}

template <typename T>
void product(std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a, std::int64_t lda, bool trans_a,
             const T* b, std::int64_t ldb, bool trans_b, T beta, T* c, std::int64_t ldc) {
  Map<T> cm(c, m, n, Eigen::OuterStride<>(ldc));
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum: only the beta term remains
    if (beta == T(0))
      cm.setZero();
    else
      cm *= beta;
    return;
  }
  // Each operand is a row-major map of its stored shape; transposing the map
  // gives op(x) without a copy.
  const ConstMap<T> am(a, trans_a ? k : m, trans_a ? m : k, Eigen::OuterStride<>(lda));
  const ConstMap<T> bm(b, trans_b ? n : k, trans_b ? k : n, Eigen::OuterStride<>(ldb));
  if (trans_a && trans_b)
    assign(cm, alpha, am.transpose(), bm.transpose(), beta);
  else if (trans_a)
    assign(cm, alpha, am.transpose(), bm, beta);
  else if (trans_b)
    assign(cm, alpha, am, bm.transpose(), beta);
  else
    assign(cm, alpha, am, bm, beta);
}

}  // namespace

void NODEFLOW_PRODUCT_NAME(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                           std::int64_t lda, bool trans_a, const float* b, std::int64_t ldb, bool trans_b,
                           float beta, float* c, std::int64_t ldc) {
  product<float>(m, n, k, alpha, a, lda, trans_a, b, ldb, trans_b, beta, c, ldc);
}

void NODEFLOW_PRODUCT_NAME(std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* a,
                           std::int64_t lda, bool trans_a, const double* b, std::int64_t ldb, bool trans_b,
                           double beta, double* c, std::int64_t ldc) {
  product<double>(m, n, k, alpha, a, lda, trans_a, b, ldb, trans_b, beta, c, ldc);
}

}  // namespace nodeflow::product
