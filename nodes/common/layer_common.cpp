#include "nodes/common/layer_common.hpp"

#include <algorithm>

#include "core/accumulate.hpp"
#include "core/errors.hpp"

namespace nodeflow {
namespace {

std::string input_words(std::size_t index, const std::string& name) {
  return "input " + std::to_string(index) + " (" + name + ")";
}

}  // namespace

void check_float_input(const std::string& op, std::size_t index, const std::string& input_name,
                       DType dtype) {
  if (!is_float(dtype))
    throw UnsupportedDType(op + " does not take dtype " + std::string(dtype_name(dtype)) + " (" +
                           input_words(index, input_name) +
                           "; allowed: float32, float64, float16, bfloat16)");
}

void check_same_dtype(const std::string& op, std::size_t index, const std::string& input_name,
                      DType dtype, const std::string& first_name, DType first) {
  if (dtype != first)
    throw UnsupportedDType(input_words(index, input_name) + " has dtype " +
                           std::string(dtype_name(dtype)) + " but " + input_words(0, first_name) +
                           " has " + std::string(dtype_name(first)) + "; " + op +
                           " needs one dtype");
}

void check_int64_input(const std::string& op, std::size_t index, const std::string& input_name,
                       DType dtype) {
  if (dtype != DType::Int64)
    throw UnsupportedDType(op + " needs dtype int64 for " + input_words(index, input_name) +
                           ", got " + std::string(dtype_name(dtype)));
}

void require_saved(const std::string& op, std::size_t saved, std::size_t count) {
  if (saved < count)
    throw RunError(op + " backward needs the state of a training-mode forward (" +
                   std::to_string(count) + " saved tensors, got " + std::to_string(saved) + ")");
}

void check_output_gradient(const std::string& op, std::size_t k, const Tensor& gradient,
                           const Shape& expected) {
  if (!gradient.empty() && gradient.shape() != expected)
    throw ShapeMismatch(op + ": the gradient of output " + std::to_string(k) + " has shape " +
                        to_string(gradient.shape()) + ", the output had " + to_string(expected));
}

DType compute_dtype(DType dtype) {
  return dtype == DType::Float16 || dtype == DType::BFloat16 ? DType::Float32 : dtype;
}

Tensor as_dtype(const Tensor& t, DType dtype) {
  if (t.empty() || t.dtype() == dtype) return t;
  return t.cast(dtype);
}

void accumulate_gradient(Tensor& dst, const Tensor& src, double scale) {
  if (dst.empty() || src.empty()) return;
  if (dst.numel() != src.numel())
    throw RunError("gradient of shape " + to_string(src.shape()) + " does not fit input of shape " +
                   to_string(dst.shape()));
  add_scaled(dst, src, scale);
}

std::int64_t dims_product(const Shape& shape, std::size_t begin, std::size_t end) {
  std::int64_t p = 1;
  for (std::size_t a = begin; a < end; ++a) p *= shape[a];
  return p;
}

std::size_t normalize_axis(std::int64_t axis, std::size_t rank, std::size_t extra) {
  const auto r = static_cast<std::int64_t>(rank);
  const std::int64_t hi = r + static_cast<std::int64_t>(extra) - 1;
  if (axis < -r || axis > hi)
    throw InvalidAttribute("attributes.axis: expected an integer in [" + std::to_string(-r) + ", " +
                           std::to_string(hi) + "] for input rank " + std::to_string(rank) +
                           ", got " + std::to_string(axis));
  return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

}  // namespace nodeflow
