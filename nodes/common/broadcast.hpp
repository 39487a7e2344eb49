#pragma once
// Numpy (multidirectional) broadcasting and the one N-D strided traversal of
// the elementwise and broadcast ops (Add ... Mean, PRelu, Gemm's C, MatMul's
// batch axes), plus the reduction of a broadcast gradient back to an input's
// shape (docs/operators.md, "Broadcasting").
//
// The traversal works on a BroadcastPlan: the output axes with size-1 axes
// dropped and neighbours merged wherever every operand walks them as one, so
// same-shape operands become one flat run and a per-channel bias [C, 1, 1]
// against [N, C, H, W] becomes runs of H*W elements with a fixed bias element.
// Kernels receive whole runs (a pointer step of 0 or 1 per operand in the
// broadcast case) and can hand them to Eigen array expressions.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/parallel.hpp"
#include "core/shape.hpp"
#include "core/tensor.hpp"

namespace nodeflow {

/// numpy broadcasting (shapes aligned on the right; a dimension 1 stretches).
/// Dynamic dimensions: (?, 1) -> ?, (?, n) -> n for n != 1, (?, ?) -> ?.
/// Throws ShapeMismatch naming both shapes and the output axis that does not fit.
Shape broadcast_shapes(const Shape& a, const Shape& b);

/// The broadcast of several shapes (Sum, Max, ... with any number of inputs).
/// Throws ShapeMismatch "input 0 [2, 3] and input 1 [4] cannot be broadcast
/// (axis 1 of the result: 3 vs 4)", naming the inputs by position.
Shape broadcast_shapes(std::span<const Shape> shapes);

/// Element strides that read a tensor of shape `shape` as if it were broadcast
/// to `out` (0 along stretched or missing axes). `shape` must broadcast to `out`.
std::vector<std::int64_t> broadcast_strides(const Shape& shape, const Shape& out);

/// A static output shape and the element strides of each operand over it,
/// simplified for the traversal (see the file comment). `dims` is never empty.
struct BroadcastPlan {
  std::vector<std::int64_t> dims;                  ///< merged axes, outermost first
  std::vector<std::vector<std::int64_t>> strides;  ///< per operand, one per merged axis
  std::int64_t total = 0;                          ///< output elements

  std::int64_t inner() const { return dims.back(); }
  /// Operand k's pointer step inside a run (0 or 1 for broadcast_strides).
  std::int64_t step(std::size_t k) const { return strides[k].back(); }
};

/// The plan that reads operands of the given strides (one vector per operand,
/// each of out's rank) over the static shape `out`.
BroadcastPlan plan_strides(const Shape& out, std::vector<std::vector<std::int64_t>> strides);

/// The plan that reads tensors of the given shapes broadcast to `out`.
BroadcastPlan plan_broadcast(const Shape& out, std::span<const Shape> operands);

/// Calls f(i, offsets, n) for the runs covering output elements [begin, end)
/// in row-major order: elements i .. i+n-1, along which operand k starts at
/// offsets[k] and moves by plan.step(k). N is the plan's operand count.
template <std::size_t N, typename F>
void for_each_run(const BroadcastPlan& plan, std::int64_t begin, std::int64_t end, F&& f) {
  if (begin >= end) return;
  const std::size_t rank = plan.dims.size();
  const std::int64_t inner = plan.inner();
  // Row r starts at output element r * inner; `row` holds each operand's
  // offset at the start of the current row, `index` the row's outer index.
  std::vector<std::int64_t> index(rank, 0);
  std::array<std::int64_t, N> row{};
  std::int64_t rest = begin / inner;
  for (std::size_t a = rank - 1; a-- > 0;) {
    index[a] = rest % plan.dims[a];
    rest /= plan.dims[a];
    for (std::size_t k = 0; k < N; ++k) row[k] += index[a] * plan.strides[k][a];
  }
  std::int64_t pos = begin % inner;
  std::array<std::int64_t, N> at{};
  for (std::int64_t i = begin; i < end;) {
    const std::int64_t n = std::min(inner - pos, end - i);
    for (std::size_t k = 0; k < N; ++k) at[k] = row[k] + pos * plan.step(k);
    f(i, at, n);
    i += n;
    pos += n;
    if (pos < inner) continue;
    pos = 0;
    for (std::size_t a = rank - 1; a-- > 0;) {
      for (std::size_t k = 0; k < N; ++k) row[k] += plan.strides[k][a];
      if (++index[a] < plan.dims[a]) break;
      for (std::size_t k = 0; k < N; ++k) row[k] -= plan.strides[k][a] * plan.dims[a];
      index[a] = 0;
    }
  }
}

/// Output elements below which a traversal stays on the calling thread: the
/// threads' start-up costs more than such a pass.
inline constexpr std::int64_t kParallelElements = std::int64_t{1} << 15;

/// for_each_run over the whole output, split into contiguous parts across up
/// to `threads` threads for large outputs; f must only write output elements
/// of its own runs.
template <std::size_t N, typename F>
void parallel_runs(const BroadcastPlan& plan, int threads, F&& f) {
  if (threads <= 1 || plan.total < kParallelElements) {
    for_each_run<N>(plan, 0, plan.total, f);
    return;
  }
  parallel_ranges(threads, plan.total,
                  [&](std::int64_t begin, std::int64_t end) { for_each_run<N>(plan, begin, end, f); });
}

/// Calls f(i, ia, ib) for every flat index i of `out` in row-major order, with
/// the flat offsets ia, ib given by the strides `sa`, `sb` (broadcast_strides).
template <typename F>
void for_each_broadcast(const Shape& out, const std::vector<std::int64_t>& sa,
                        const std::vector<std::int64_t>& sb, F&& f) {
  const BroadcastPlan plan = plan_strides(out, {sa, sb});
  const std::int64_t step_a = plan.step(0), step_b = plan.step(1);
  for_each_run<2>(plan, 0, plan.total, [&](std::int64_t i, const std::array<std::int64_t, 2>& at, std::int64_t n) {
    for (std::int64_t j = 0; j < n; ++j) f(i + j, at[0] + j * step_a, at[1] + j * step_b);
  });
}

/// The parts reduce_into cuts an output of `total` elements into when it sums
/// them into `numel` elements: a power of two up to 8, each part at least
/// kParallelElements output elements and 4 times `numel` (the usual broadcast
/// bias; a larger sum is one part). Fixed by the sizes alone, never by the
/// thread count, so the sums have the same bits on any number of threads
/// (docs/architecture.md, "Threads").
inline std::int64_t reduce_parts(std::int64_t numel, std::int64_t total) {
  std::int64_t parts = 1;
  while (parts < 8 && 2 * parts * kParallelElements <= total && 2 * parts * numel * 4 <= total) parts *= 2;
  return parts;
}

/// Whether a node's one pass over its output gradient also takes the sum of
/// a broadcast input's gradient, of `numel` elements (Add's and Mul's fused
/// backward passes): for runs of at least 1,024 elements and, on several
/// threads, a sum that reduce_into cuts into parts for the threads to share.
inline bool fuse_broadcast_sum(const BroadcastPlan& plan, std::int64_t numel, int threads) {
  return plan.inner() >= 1024 && (threads <= 1 || reduce_parts(numel, plan.total) > 1);
}

/// A zero-filled tensor of `dtype` (C++ type T) and `shape` into which
/// body(begin, end, acc) adds the contributions of output elements
/// [begin, end) of an output of `total` elements (acc: the tensor's data).
/// Contributions of different output elements may land on one element of
/// acc, so the output is cut into reduce_parts parts, each summed into a copy
/// of its own (on up to `threads` threads) and the copies added up after, in
/// part order.
template <typename T, typename Body>
Tensor reduce_into(const Shape& shape, std::int64_t total, int threads, Body&& body) {
  Tensor acc(dtype_of_v<T>, shape);
  const std::int64_t parts = reduce_parts(acc.numel(), total);
  if (parts <= 1) {
    body(std::int64_t{0}, total, acc.data<T>());
    return acc;
  }
  std::vector<Tensor> partial(static_cast<std::size_t>(parts));
  parallel_ranges(static_cast<int>(std::min<std::int64_t>(threads, parts)), parts,
                  [&](std::int64_t first, std::int64_t last) {
                    for (std::int64_t p = first; p < last; ++p) {
                      Tensor& mine = partial[static_cast<std::size_t>(p)];
                      mine = Tensor(dtype_of_v<T>, shape);
                      body(total * p / parts, total * (p + 1) / parts, mine.data<T>());
                    }
                  });
  T* a = acc.data<T>();
  for (const Tensor& t : partial) {
    const T* q = t.data<T>();
    for (std::int64_t e = 0; e < acc.numel(); ++e) a[e] += q[e];
  }
  return acc;
}

/// One run of sum_to_shape, src[0, n) of the gradient: added elementwise into
/// acc[0, n) if `along` (the run lies along an axis the input keeps), else
/// its sum (reduce_lines::sum, one fixed order) into acc[0]. A node that
/// sums the runs in a pass of its own (Add's backward) calls it too, for
/// sum_to_shape's bits.
void add_run(float* acc, const float* src, std::int64_t n, bool along);
void add_run(double* acc, const double* src, std::int64_t n, bool along);

/// The gradient `g` of a broadcast output summed over the axes along which an
/// input of shape `shape` was broadcast (docs/operators.md, "Broadcasting"):
/// a tensor of `shape` in g's dtype, which must be float32 or float64 (see
/// to_compute). `shape` must broadcast to g's shape.
Tensor sum_to_shape(const Tensor& g, const Shape& shape, int threads = 1);

/// dst += scale * sum_to_shape(g, dst.shape()): the gradient of an input of
/// dst's shape that was broadcast to g's shape. Any float dtypes; an empty dst
/// or g is a no-op (see accumulate_gradient).
void accumulate_broadcast_gradient(Tensor& dst, const Tensor& g, double scale, int threads = 1);

}  // namespace nodeflow
