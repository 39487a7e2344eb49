#pragma once
// The innermost loops of the float reductions and their gradients, each
// compiled for the baseline, AVX2 and AVX-512F and picked at run time (the
// library is built for baseline x86-64, whose SSE2 packets left a reduction
// over a middle axis compute-bound: every input line is added into a row of
// partial sums kept in the first-level cache). Elementwise, in the order of
// the source: every instruction set gives the same bits as a scalar loop.
// The traversal stays reduce_axes.hpp's; these are what its kernels
// (reduce_kernels.cpp) call for one line.
#include <cstdint>

namespace nodeflow::reduce_lines {

/// acc[j] = acc[j] + x[j] for j < n.
void add(float* acc, const float* x, std::int64_t n);
void add(double* acc, const double* x, std::int64_t n);

/// acc[j] = (((acc[j] + x[j]) + x[stride + j]) + ...) + x[(count - 1) * stride + j]
/// for j < n: `count` lines added in order in one pass over acc (the same
/// bits as `count` calls of add), so a middle-axis sum loads and stores its
/// row of partial sums once per `count` input lines rather than per line.
void add_lines(float* acc, const float* x, std::int64_t stride, std::int64_t count, std::int64_t n);
void add_lines(double* acc, const double* x, std::int64_t stride, std::int64_t count, std::int64_t n);

/// acc[j] = acc[j] + v for j < n.
void add_scalar(float* acc, float v, std::int64_t n);
void add_scalar(double* acc, double v, std::int64_t n);

/// y[j] = y[j] / d for j < n (ReduceMean's division: the quotient, not a
/// product with 1 / d, whose rounding differs; SSE2's divisions, four at a
/// time, were a fifth of ReduceMean's time over the last axis).
void divide(float* y, float d, std::int64_t n);
void divide(double* y, double d, std::int64_t n);

/// y[r] = the sum of row r for r < rows, row r being x[r * n, r * n + n),
/// always in one order: eight lanes, lane l adding x[l], x[8 + l], ... in
/// turn to 0; the lanes joined ((0 + 4) + (2 + 6)) + ((1 + 5) + (3 + 7));
/// then the tail elements one by one. A few rows are summed at once, so
/// short rows (56 elements) are not bound by the latency of their adds.
void sum_rows(const float* x, float* y, std::int64_t rows, std::int64_t n);
void sum_rows(const double* x, double* y, std::int64_t rows, std::int64_t n);

/// The elements of one block of sum and dot.
inline constexpr std::int64_t kSumBlock = 1024;

/// The sum of x[0, n), always in one order: block by block of kSumBlock
/// elements, the blocks' sums added in turn to 0; in a block, eight sets of
/// eight lanes, lane l of set s adding x[64 i + 8 s + l] for i = 0, 1, ... in
/// turn to 0 (the whole eights after the last 64 going to sets 0, 1, ... in
/// turn), the sets joined ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7)), then
/// their lanes and the block's tail as sum_rows's. Its adds form eight
/// independent chains, so a long line (a broadcast bias's run of 3136) is not
/// bound by their latency; the blocks let a caller that makes a line's
/// values a block at a time (elementwise::add_gradient) give the same bits.
float sum(const float* x, std::int64_t n);
double sum(const double* x, std::int64_t n);

/// The sum of the products x[j] * y[j], j < n, each rounded to the type,
/// in sum's order: the bits of sum over a line holding the products.
float dot(const float* x, const float* y, std::int64_t n);
double dot(const double* x, const double* y, std::int64_t n);

/// Mul's two gradients over one run of a feature map whose factor is one
/// value b there (a per-channel scale, elementwise/mul_div.cpp), in one pass
/// that reads the run of g once: d[j] = k * (g[j] * b), or d[j] + that unless
/// `assign`, for j < n; returns dot(g, x, n), its bits.
float scale_and_dot(float* d, bool assign, float k, float b, const float* g, const float* x, std::int64_t n);
double scale_and_dot(double* d, bool assign, double k, double b, const double* g, const double* x, std::int64_t n);

/// x[r * n + j] = v[r] for r < rows, j < n.
void fill_rows(float* x, const float* v, std::int64_t rows, std::int64_t n);
void fill_rows(double* x, const double* v, std::int64_t rows, std::int64_t n);

}  // namespace nodeflow::reduce_lines
