#pragma once
// What the fast pooling kernels (pool_fast.hpp) read instead of dividing in
// their loops: per-axis tap tables built once per call from a resolved
// PoolGeometry, and the split of the work into items (N x C planes, and
// chunks of rows along the first spatial axis) that threads share.
//
// Windows are separable: the valid taps of an N-D window are the cartesian
// product of per-axis valid taps, so the kernels reduce one axis at a time,
// the last (contiguous) axis first. Reducing the last axis first keeps
// MaxPool's row-major tie rule: the first maximal element in row-major tap
// order is the first maximal row's first maximal element.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "nodes/pooling/pool_geometry.hpp"

namespace nodeflow::fast {

/// The reduction of a window.
enum class Reduce { Max, Average, Lp };

/// One spatial axis of a plan: the resolved axis (in, out, kernel, stride,
/// dilation, pads; position()) and the tables the kernels read instead of
/// dividing in their loops. "Valid" taps lie inside the input.
struct AxisPlan : WindowAxis {
  /// Per output: valid taps are [tap_lo, tap_hi) (WindowAxis::valid_taps).
  std::vector<std::int64_t> tap_lo, tap_hi;
  /// Per output: AveragePool's divisor factor along this axis (valid taps,
  /// or taps inside input + pads with count_include_pad).
  std::vector<std::int64_t> divisor;
  /// Taps valid for at least one output are inside [t_first, t_end).
  std::int64_t t_first = 0, t_end = 0;
  /// Per tap t (index t - t_first): the outputs [out_lo, out_hi) for which t is valid.
  std::vector<std::int64_t> out_lo, out_hi;
  /// Per input position i: the windows holding it, ascending, at
  /// windows[window_begin[i] .. window_begin[i + 1]).
  std::vector<std::int64_t> window_begin, windows;
};

/// Everything a fast kernel needs about one pooling call.
struct Plan {
  Reduce reduce = Reduce::Max;
  bool count_include_pad = false;
  std::int64_t p = 2;  ///< LpPool's exponent
  std::int64_t planes = 0, in_plane = 0, out_plane = 0;
  std::vector<AxisPlan> axes;
  /// One window holding the whole plane (the Global ops, or a kernel equal to
  /// the input without pads or dilation): reduced as one contiguous run.
  bool whole_plane = false;
  /// Lane offsets fit int32 for every axis: the vector kernels may run.
  bool vector_ok = true;
  /// Product of the divisors of axes 1..n-1 at each output position of those
  /// axes (row-major): AveragePool's divisor is axes[0].divisor[o0] times it.
  std::vector<std::int64_t> inner_divisor;
  /// Forward items: planes x chunks of `chunk` outputs along axis 0.
  std::int64_t chunk = 1, chunks = 1;
  /// Elements of each forward scratch buffer (one thread).
  std::size_t forward_scratch = 0;
  /// Average backward items: planes x chunks of `input_chunk` inputs along axis 0.
  std::int64_t input_chunk = 1, input_chunks = 1;
  /// Elements of each average-backward scratch buffer (one thread).
  std::size_t backward_scratch = 0;
  /// At most how many windows hold one input (most_windows_per_input): the
  /// terms of one element's gradient sum.
  double overlap = 1;
  /// Set by the caller for the accumulator type (pool_math.hpp): forward
  /// averages and Lp values below value_floor (LpPool's lp_plain_floor; 0
  /// for AveragePool) or not finite are redone exactly; AveragePool backward
  /// items whose |dY| exceeds term_limit (gradient_term_limit) are redone in
  /// float64.
  double value_floor = 0;
  double term_limit = 0;

  std::int64_t forward_items() const { return planes * chunks; }
  std::int64_t backward_items() const { return planes * input_chunks; }
  /// Elements of one output plane after the first spatial axis.
  std::int64_t inner_out() const { return axes.empty() ? 1 : out_plane / axes[0].out; }
};

/// Input positions [r0, r1) of axis `a` that the windows [ob, oe) read.
/// With dilations the first valid position is not monotonic in the window.
void axis_slab(const AxisPlan& a, std::int64_t ob, std::int64_t oe, std::int64_t& r0,
               std::int64_t& r1);

/// Builds the plan of `g` for `threads` threads. Returns false when the
/// geometry is outside what the fast kernels handle (a plane of 2^31 elements
/// or more, tap tables far larger than the tensors, or a per-thread scratch
/// buffer over max(2^15, in_plane + out_plane) elements); callers then use the
/// reference kernels (pool_kernels.hpp), which handle every geometry.
bool make_plan(const PoolGeometry& g, Reduce reduce, bool count_include_pad, std::int64_t p,
               int threads, Plan& plan);

/// Input elements [begin, end) (offsets in the plane) of N,C plane `plane`
/// whose AveragePool gradient the fast kernels left alone because a sum
/// could overflow: average_backward_wide computes them.
struct GradientRedo {
  std::int64_t plane, begin, end;
};

/// Where MaxPool's winners go, one per output: row-major flat input indices
/// (int64, what ONNX's Indices are made from) or offsets within the output's
/// N,C input plane (int32: half the bytes, MaxPool's training state where a
/// plane has fewer than 2^31 elements). At most one pointer is set.
struct Argmax {
  std::int64_t* flat = nullptr;
  std::int32_t* offsets = nullptr;
  bool empty() const { return flat == nullptr && offsets == nullptr; }
  /// The winners from output o on.
  Argmax at(std::int64_t o) const {
    return {flat ? flat + o : nullptr, offsets ? offsets + o : nullptr};
  }
};

/// A saved argmax for the backward, in one of Argmax's two forms (one
/// pointer set).
struct SavedArgmax {
  const std::int64_t* flat = nullptr;
  const std::int32_t* offsets = nullptr;
};

/// Throws the RunError for a saved argmax `value` of output `output` that
/// lies outside its plane `plane` of in_plane inputs: an offset (0 to
/// in_plane) or a flat index (the plane's first input onward).
[[noreturn]] void throw_argmax_outside(std::int64_t value, std::int64_t output,
                                       std::int64_t plane, std::int64_t in_plane, bool offset);

}  // namespace nodeflow::fast
