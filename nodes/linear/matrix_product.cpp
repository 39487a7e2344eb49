#include "nodes/linear/matrix_product.hpp"

#include <Eigen/Core>

namespace nodeflow {
namespace {

template <typename T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <typename T, typename A, typename B>
void assign(Eigen::Map<RowMatrix<T>>& c, T alpha, const A& a, const B& b, T beta) {
  if (beta == T(0)) {
    c.noalias() = alpha * a * b;
  } else {
    if (beta != T(1)) c *= beta;
    c.noalias() += alpha * a * b;
  }
}

}  // namespace

template <typename T>
void matrix_product(std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
                    bool trans_a, const T* b, bool trans_b, T beta, T* c) {
  Eigen::Map<RowMatrix<T>> cm(c, m, n);
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
  const Eigen::Map<const RowMatrix<T>> am(a, trans_a ? k : m, trans_a ? m : k);
  const Eigen::Map<const RowMatrix<T>> bm(b, trans_b ? n : k, trans_b ? k : n);
  if (trans_a && trans_b)
    assign(cm, alpha, am.transpose(), bm.transpose(), beta);
  else if (trans_a)
    assign(cm, alpha, am.transpose(), bm, beta);
  else if (trans_b)
    assign(cm, alpha, am, bm.transpose(), beta);
  else
    assign(cm, alpha, am, bm, beta);
}

template void matrix_product<float>(std::int64_t, std::int64_t, std::int64_t, float, const float*,
                                    bool, const float*, bool, float, float*);
template void matrix_product<double>(std::int64_t, std::int64_t, std::int64_t, double,
                                     const double*, bool, const double*, bool, double, double*);

}  // namespace nodeflow
