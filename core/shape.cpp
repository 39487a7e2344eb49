#include "core/shape.hpp"

#include <limits>

#include "core/errors.hpp"

namespace nodeflow {

std::int64_t element_count(const Shape& shape, const std::string& what) {
  // The product of the nonzero dimensions must fit too, whatever their order:
  // code that walks a shape (strides, plane sizes) multiplies them even when
  // another dimension is 0.
  std::int64_t n = 1;
  bool empty = false;
  for (std::int64_t d : shape) {
    if (d < 0)
      throw ShapeMismatch(what + ": dimension " + std::to_string(d) + " in " + to_string(shape) +
                          " is negative");
    if (d == 0) {
      empty = true;
      continue;
    }
    if (n > std::numeric_limits<std::int64_t>::max() / d)
      throw ShapeMismatch(what + ": element count of " + to_string(shape) + " overflows int64");
    n *= d;
  }
  return empty ? 0 : n;
}

bool is_static(const Shape& shape) {
  for (std::int64_t d : shape)
    if (d < 0) return false;
  return true;
}

std::string to_string(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    // Only the run-time dimension reads "?": any other negative value is shown
    // as it is, since it is what an error about it must name.
    s += shape[i] == kDynamicDim ? std::string("?") : std::to_string(shape[i]);
  }
  return s + "]";
}

std::vector<std::int64_t> row_major_strides(const Shape& shape) {
  std::vector<std::int64_t> st(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) st[i - 1] = st[i] * shape[i];
  return st;
}

}  // namespace nodeflow
