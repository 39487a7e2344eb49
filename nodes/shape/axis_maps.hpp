#pragma once
// The one kernel of the data-movement ops (Slice, Pad, Expand, Tile,
// Gather): each output axis reads the input through a table of indices,
// one per output position, and the gradient is the adjoint of that copy, a
// scatter-add (docs/operators.md, "Gradient conventions": the exact inverse
// movement, sums over copies, scatter-add).
//
//   Slice   source[a][i] = start + i * step
//   Pad     the input index the border copies (edge, reflect, wrap) or
//           kFill (constant)
//   Expand  0 along a stretched axis, i elsewhere
//   Tile    i % d
//   Gather  the normalized indices along the gathered axis
//
// The tables have one entry per output position of each axis, so they are
// as small as the sum (not the product) of the output's dimensions.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/shape.hpp"
#include "core/tensor.hpp"

namespace nodeflow {

/// An output position that takes the fill value instead of an input element.
inline constexpr std::int64_t kFill = -1;

/// How an output of rank r reads an input viewed with rank r (`input`, its
/// dimensions; the data are row-major in that view).
struct AxisMaps {
  Shape input;
  Shape output;
  /// source[a][i]: the input index along axis a that output index i reads,
  /// in [0, input[a]) or kFill. Empty when the output has no element (its
  /// other dimensions may then be too large for tables).
  std::vector<std::vector<std::int64_t>> source;
};

/// The maps with source[a][i] = source_of(a, i) for every output position.
template <typename F>
AxisMaps make_axis_maps(Shape input, Shape output, F&& source_of) {
  AxisMaps maps{std::move(input), std::move(output), {}};
  if (element_count(maps.output) == 0) return maps;
  for (std::size_t a = 0; a < maps.output.size(); ++a) {
    std::vector<std::int64_t> map(static_cast<std::size_t>(maps.output[a]));
    for (std::int64_t i = 0; i < maps.output[a]; ++i) map[static_cast<std::size_t>(i)] = source_of(a, i);
    maps.source.push_back(std::move(map));
  }
  return maps;
}

/// out (allocated with maps.output, any dtype) gets, element by
/// element, the element of `in` (same dtype, maps.input's element count) the
/// maps name, or *fill (one element of that dtype; zero when null) at kFill.
void copy_mapped(const AxisMaps& maps, const Tensor& in, const Tensor* fill, Tensor& out, int threads);

/// The gradient of copy_mapped: grad_in (float, maps.input's element count)
/// += scale * the sum of the grad_out elements (maps.output) that
/// copied each element; kFill positions send nothing. An empty grad_out or
/// grad_in does nothing.
void scatter_add_mapped(const AxisMaps& maps, const Tensor& grad_out, double scale, Tensor& grad_in,
                        int threads);

}  // namespace nodeflow
