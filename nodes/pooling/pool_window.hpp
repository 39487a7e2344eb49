#pragma once
// The one N-D window traversal shared by every pooling kernel (average, max,
// Lp, their Global forms and their backward passes), for any number of
// spatial axes >= 1.
#include <cstdint>
#include <functional>
#include <span>

#include "nodes/pooling/pool_geometry.hpp"

namespace nodeflow {

/// One pooling window of an N,C plane.
struct PoolWindow {
  /// Row-major index of the window in an output plane.
  std::int64_t output = 0;
  /// Row-major offsets, inside an input plane, of the input elements the window
  /// holds, in row-major order of window positions (taps). Taps that fall in
  /// the padding are left out, so padding never takes part in a value.
  std::span<const std::int64_t> inputs;
  /// Taps inside the input or the explicit / auto_pad pads: AveragePool's
  /// divisor with count_include_pad=1. Positions past the end pad (created by
  /// ceil_mode) are not counted; with dilations only sampled taps count.
  std::int64_t padded_count = 0;
};

/// At most how many windows hold one input element: the product over the
/// axes of min(kernel, output) (each tap of a window is a different
/// position, so an element is in at most one window per tap). Bounds the
/// terms of any one element's gradient sum.
double most_windows_per_input(const PoolGeometry& geometry);

/// Calls visit once per window, in row-major order of output positions.
/// The windows are the same for every N,C plane; callers loop over planes.
/// `geometry` must be resolved (pool_geometry()).
void for_each_window(const PoolGeometry& geometry,
                     const std::function<void(const PoolWindow&)>& visit);

}  // namespace nodeflow
