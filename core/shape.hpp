#pragma once
// N-D shapes: int64 dimensions, element counts checked for overflow.
#include <cstdint>
#include <string>
#include <vector>

namespace nodeflow {

/// Dimensions, outermost first (row-major, NCHW for pooling tensors).
using Shape = std::vector<std::int64_t>;

/// A dimension not known until run time (JSON `null`).
inline constexpr std::int64_t kDynamicDim = -1;

/// Product of the dimensions. Throws ShapeMismatch naming the shape when a
/// dimension is negative or the product overflows int64 (`what` prefixes the
/// message, e.g. "inputs[0] (x).shape").
std::int64_t element_count(const Shape& shape, const std::string& what = "shape");

/// True when every dimension is known (>= 0).
bool is_static(const Shape& shape);

/// "[2, 3, ?, 4]" (? for a dynamic dimension).
std::string to_string(const Shape& shape);

/// Row-major strides in elements.
std::vector<std::int64_t> row_major_strides(const Shape& shape);

}  // namespace nodeflow
