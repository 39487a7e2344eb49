#pragma once
// The one traversal of the reductions (Reduce*, ArgMax): which axes a node
// reduces, the output shape, and a plan that reads the input as contiguous
// runs ("lines") so that every reduction, and every gradient spread back over
// the input, streams through memory whichever axes are reduced.
//
// The plan drops the axes of length 1 and merges neighbouring axes that are
// both reduced or both kept; the last merged axis is the line. When it is
// kept (a middle axis reduced, e.g. [16, 256, 3136] over axis 1), a line of n
// input elements meets n consecutive outputs, and the lines of one output row
// are combined element by element. When it is reduced (the last axis reduced),
// a line folds into one output. Work is split over output rows (or column
// blocks of them), so threads never write the same output.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/parallel.hpp"
#include "core/shape.hpp"

namespace nodeflow {

/// The reduced axes as a mask over the input's axes. `axes` are ONNX's (each
/// in [-r, r-1], no repeats; axis_mask of constant_inputs.hpp, which throws
/// its ShapeMismatch); empty means every axis, or none when
/// `noop_with_empty_axes` (then the op only maps its elements, e.g.
/// ReduceSumSquare squares).
std::vector<bool> reduced_axes(std::span<const std::int64_t> axes, std::size_t rank,
                               bool noop_with_empty_axes);

/// The output shape: reduced axes become 1 (keepdims) or are dropped; dynamic
/// dimensions of kept axes stay dynamic.
Shape reduced_shape(const Shape& input, const std::vector<bool>& reduced, bool keepdims);

/// How a (static) input shape is read for one set of reduced axes.
struct ReducePlan {
  bool line_reduced = false;  ///< the line folds into one output (else it meets `line` outputs)
  std::int64_t line = 1;      ///< elements per line, contiguous in the input
  /// Kept axes before the line (input strides): they number the output rows
  /// (line kept) or the outputs (line reduced), in row-major order.
  std::vector<std::int64_t> kept_dims, kept_strides;
  /// Reduced axes besides the line (input strides): the lines of one output.
  std::vector<std::int64_t> reduced_dims, reduced_strides;
  std::int64_t outputs = 1;      ///< output elements
  std::int64_t lines = 1;        ///< lines combined into each output
  std::int64_t reduced = 1;      ///< input elements per output (the Mean divisor)
  std::int64_t input_count = 0;  ///< input elements (0: every output is the empty-set value)
};

ReducePlan make_reduce_plan(const Shape& input, const std::vector<bool>& reduced);

/// Offsets sum(index[a] * strides[a]) of an odometer over `dims`, in row-major order.
class StridedOffsets {
 public:
  StridedOffsets(const std::vector<std::int64_t>& dims, const std::vector<std::int64_t>& strides,
                 std::int64_t start = 0);
  std::int64_t offset() const { return offset_; }
  void next() {
    for (std::size_t a = dims_.size(); a-- > 0;) {
      offset_ += strides_[a];
      if (++index_[a] < dims_[a]) return;
      offset_ -= strides_[a] * dims_[a];
      index_[a] = 0;
    }
  }
  /// To the flat position `start` (no allocation: the traversal reuses one
  /// odometer per thread).
  void seek(std::int64_t start) {
    offset_ = 0;
    for (std::size_t a = dims_.size(); a-- > 0;) {
      index_[a] = start % dims_[a];
      start /= dims_[a];
      offset_ += index_[a] * strides_[a];
    }
  }

 private:
  const std::vector<std::int64_t>& dims_;
  const std::vector<std::int64_t>& strides_;
  std::vector<std::int64_t> index_;
  std::int64_t offset_ = 0;
};

/// Output rows are cut into this many column blocks (plan.line kept), so that
/// a few long rows still give every thread work.
std::int64_t reduce_column_blocks(const ReducePlan& plan, int threads);

/// Threads worth using for a reduction over `input_count` elements: 1 for
/// small tensors, where starting a team costs more than it saves.
int reduce_threads(const ReducePlan& plan, int threads);

/// True when the threads should share each line rather than the outputs: the
/// line is reduced, long, and there are fewer outputs than threads (a whole
/// tensor reduced to a scalar). for_each_reduce_line then runs on one thread;
/// the kernels split each line of for_each_long_line into pieces themselves.
bool splits_lines(const ReducePlan& plan, int threads);

/// True when output o is the one line at input o * plan.line (the last axes
/// reduced): the input is a block of contiguous rows, one per output.
inline bool contiguous_rows(const ReducePlan& plan) {
  return plan.line_reduced && plan.lines == 1 && plan.kept_dims.size() <= 1;
}

/// Calls rows(begin, end) for the output ranges of a contiguous_rows plan, in
/// parallel (the threads of for_each_reduce_line).
template <typename Rows> void for_each_row_range(const ReducePlan& plan, int threads, Rows&& rows) {
  parallel_ranges(reduce_threads(plan, threads), plan.outputs, rows);
}

/// Calls line(in, out, plan.line, k) for every line of a reduced-line plan, in
/// order, on the calling thread.
template <typename Line> void for_each_long_line(const ReducePlan& plan, Line&& line) {
  StridedOffsets outputs(plan.kept_dims, plan.kept_strides);
  StridedOffsets lines(plan.reduced_dims, plan.reduced_strides);
  for (std::int64_t out = 0; out < plan.outputs; ++out, outputs.next()) {
    lines.seek(0);
    for (std::int64_t k = 0; k < plan.lines; ++k, lines.next()) line(outputs.offset() + lines.offset(), out, plan.line, k);
  }
}

/// The traversal. For every output block (a column block of an output row, or
/// one output when the line is reduced) calls line(in, out, n, k) for each of
/// its lines, k = 0, 1, ..., plan.lines - 1, in input order:
///  - line kept: input [in, in + n) meets outputs [out, out + n) element-wise;
///  - line reduced: input [in, in + n) folds into output `out`; its elements are
///    the reduced indices k * n ... k * n + n - 1 of that output.
/// Blocks run in parallel (parallel_ranges); a block's lines run in order on
/// one thread. The plan must have input_count > 0.
template <typename Line> void for_each_reduce_line(const ReducePlan& plan, int threads, Line&& line) {
  const int team = reduce_threads(plan, threads);
  if (!plan.line_reduced) {
    const std::int64_t blocks = reduce_column_blocks(plan, team);
    std::int64_t rows = 1;
    for (std::int64_t d : plan.kept_dims) rows *= d;
    parallel_ranges(team, rows * blocks, [&](std::int64_t begin, std::int64_t end) {
      StridedOffsets rows_at(plan.kept_dims, plan.kept_strides);
      StridedOffsets lines(plan.reduced_dims, plan.reduced_strides);
      for (std::int64_t item = begin; item < end; ++item) {
        const std::int64_t row = item / blocks, block = item % blocks;
        const std::int64_t c0 = plan.line * block / blocks, c1 = plan.line * (block + 1) / blocks;
        rows_at.seek(row);
        lines.seek(0);
        const std::int64_t base = rows_at.offset() + c0;
        for (std::int64_t k = 0; k < plan.lines; ++k, lines.next())
          line(base + lines.offset(), row * plan.line + c0, c1 - c0, k);
      }
    });
    return;
  }
  if (contiguous_rows(plan)) {
    // No odometer: short rows (56 elements) are most of the cost otherwise.
    for_each_row_range(plan, team, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t out = begin; out < end; ++out) line(out * plan.line, out, plan.line, std::int64_t{0});
    });
    return;
  }
  parallel_ranges(team, plan.outputs, [&](std::int64_t begin, std::int64_t end) {
    StridedOffsets outputs(plan.kept_dims, plan.kept_strides, begin);
    StridedOffsets lines(plan.reduced_dims, plan.reduced_strides);
    for (std::int64_t out = begin; out < end; ++out, outputs.next()) {
      lines.seek(0);
      for (std::int64_t k = 0; k < plan.lines; ++k, lines.next())
        line(outputs.offset() + lines.offset(), out, plan.line, k);
    }
  });
}

}  // namespace nodeflow
