#include "nodes/common/constant_inputs.hpp"

#include "core/errors.hpp"
#include "nodes/common/layer_common.hpp"

namespace nodeflow {

std::string input_name(std::size_t k, const std::string& name) {
  return "input " + std::to_string(k) + " (" + name + ")";
}

const Tensor* present(std::span<const Tensor> inputs, std::size_t i) {
  return i < inputs.size() && !inputs[i].empty() ? &inputs[i] : nullptr;
}

void check_int64_list(const std::string& op, std::size_t k, const std::string& name, const TensorInfo& t) {
  check_int64_input(op, k, name, t.dtype);
  if (t.shape.size() != 1)
    throw ShapeMismatch(input_name(k, name) + " has shape " + to_string(t.shape) + "; " + op +
                        " needs a 1-D int64 tensor");
}

std::span<const std::int64_t> int64_list(const std::string& op, std::size_t k, const std::string& name,
                                         const Tensor& t) {
  check_int64_list(op, k, name, TensorInfo{t.dtype(), t.shape()});
  return t.values<std::int64_t>();
}

std::vector<std::size_t> normalized_axes(std::span<const std::int64_t> axes, std::size_t rank, std::size_t k,
                                         const std::string& name, std::string_view rank_of) {
  const auto r = static_cast<std::int64_t>(rank);
  auto value = [&](std::size_t i) { return name + "[" + std::to_string(i) + "] = " + std::to_string(axes[i]); };
  std::vector<std::size_t> out;
  std::vector<std::size_t> given_at(rank, axes.size());  // where each axis was named first
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::int64_t v = axes[i];
    if (v < -r || v >= r)
      throw ShapeMismatch(input_name(k, name) + ": " + value(i) + " is outside [" + std::to_string(-r) + ", " +
                          std::to_string(r - 1) + "] for " + std::string(rank_of) + " rank " +
                          std::to_string(rank));
    const auto a = static_cast<std::size_t>(v < 0 ? v + r : v);
    if (given_at[a] != axes.size())
      throw ShapeMismatch(input_name(k, name) + ": " + value(i) + " repeats axis " + std::to_string(a) + " (" +
                          value(given_at[a]) + ")");
    given_at[a] = i;
    out.push_back(a);
  }
  return out;
}

std::vector<bool> axis_mask(std::span<const std::int64_t> axes, std::size_t rank, std::size_t k,
                            const std::string& name, std::string_view rank_of) {
  std::vector<bool> mask(rank, false);
  for (const std::size_t a : normalized_axes(axes, rank, k, name, rank_of)) mask[a] = true;
  return mask;
}

}  // namespace nodeflow
