#include "core/node.hpp"

#include <algorithm>

#include "core/accumulate.hpp"
#include "core/errors.hpp"

namespace nodeflow {

void check_tensor_bytes(const std::string& what, const Shape& shape, DType dtype, std::uint64_t limit) {
  // Not element_count: a run-time shape may overflow int64, and is then over
  // any limit too. A dimension 0 makes the tensor empty whatever the others.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return;
  std::uint64_t bytes = dtype_size(dtype);
  bool overflows = false;
  for (const std::int64_t d : shape)
    overflows = overflows || __builtin_mul_overflow(bytes, static_cast<std::uint64_t>(d), &bytes);
  if (!overflows && bytes <= limit) return;
  throw RunError(what + " of shape " + to_string(shape) + " and dtype " + std::string(dtype_name(dtype)) +
                 " would take " + (overflows ? "more than 2^64" : std::to_string(bytes)) +
                 " bytes, over the limit of " + std::to_string(limit) +
                 " bytes per tensor (ExecutorOptions::max_tensor_bytes; on the command line "
                 "--max-tensor-bytes)");
}

void BackwardContext::zero_if_overwritten(std::size_t k) const {
  if (overwrites(k) && !grad_inputs[k].empty()) zero_fill(grad_inputs[k], threads);
}

void Node::backward(const BackwardContext&) const {
  throw RunError(op_type() + " has no gradient");
}

}  // namespace nodeflow
