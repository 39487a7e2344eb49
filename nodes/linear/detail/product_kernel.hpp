#pragma once
// One single-threaded matrix product per instruction set, each built from
// Eigen's products in its own translation unit with that set's compiler
// switches (product_portable.cpp, product_avx2.cpp, product_avx512.cpp).
// matrix_product (nodes/linear/matrix_product.cpp) picks the best the CPU runs
// and splits the work over the executor's threads. The arguments are
// matrix_product's.
#include <cstdint>

namespace nodeflow::product {

template <typename T>
using Kernel = void (*)(std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a, std::int64_t lda,
                        bool trans_a, const T* b, std::int64_t ldb, bool trans_b, T beta, T* c,
                        std::int64_t ldc);

// `lda`, `ldb`, `ldc`: the row strides (in elements) of a, b and c as stored,
// so that a block of rows or columns of a larger matrix is passed in place.
void portable(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
              bool trans_a, const float* b, std::int64_t ldb, bool trans_b, float beta, float* c,
              std::int64_t ldc);
void portable(std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* a,
              std::int64_t lda, bool trans_a, const double* b, std::int64_t ldb, bool trans_b, double beta,
              double* c, std::int64_t ldc);
void avx2(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
          bool trans_a, const float* b, std::int64_t ldb, bool trans_b, float beta, float* c, std::int64_t ldc);
void avx2(std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* a, std::int64_t lda,
          bool trans_a, const double* b, std::int64_t ldb, bool trans_b, double beta, double* c,
          std::int64_t ldc);
void avx512(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
            bool trans_a, const float* b, std::int64_t ldb, bool trans_b, float beta, float* c,
            std::int64_t ldc);
void avx512(std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* a, std::int64_t lda,
            bool trans_a, const double* b, std::int64_t ldb, bool trans_b, double beta, double* c,
            std::int64_t ldc);

}  // namespace nodeflow::product
